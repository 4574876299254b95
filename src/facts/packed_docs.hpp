// Packed documents: several sequences concatenated in one buffer, each token attending only to
// the tokens of its own document (the ml-engineering guide's "packed vs unpacked" caveat, made measurable). The
// attention work of a packed buffer is the sum over documents of len^2 instead of seqlen^2.
//
// A document list is given in buffer order; an empty list means one document (the whole
// sequence). `split_documents` cuts a sequence into pieces of one length, the last one shorter
// when the length does not divide the sequence.
#pragma once

#include <cstdint>
#include <vector>

namespace ub {

// Pieces of `doc_len` tokens covering `seqlen` (the last one shorter if needed); one document
// when doc_len <= 0 or doc_len >= seqlen. Throws UsageError for seqlen <= 0.
std::vector<int64_t> split_documents(int64_t seqlen, int64_t doc_len);

// Throws UsageError (naming `what`) unless every length is positive and they sum to `seqlen`.
void check_documents(const std::vector<int64_t>& lens, int64_t seqlen, const char* what);

// Position of each document's first token, and the end: size lens.size() + 1.
std::vector<int64_t> document_starts(const std::vector<int64_t>& lens);

int64_t longest_document(const std::vector<int64_t>& lens);
bool equal_lengths(const std::vector<int64_t>& lens);
double sum_of_squares(const std::vector<int64_t>& lens);

}  // namespace ub
