#!/usr/bin/env bash
# The HTML report renders its five charts in a real headless Chromium with the network off (the
# page must be self-contained), with the decision at a glance above them and the alert naming the
# software that differs; the page's own layout shows every chart with its title, axes and labels,
# no two of which overlap (label_boxes.html; proved able to fail on a copy with a label planted
# over another). Usage: report_renders.sh UPGRADEBENCH FIXTURES ARTEFACT_DIR
# Keeps report.html and a screenshot in ARTEFACT_DIR.
set -euo pipefail
bin=$1 fixtures=$2 art=$3
command -v chromium >/dev/null || { echo "chromium is not installed (Debian package chromium): install it to run this test" >&2; exit 1; }
rm -rf "$art" && mkdir -p "$art"
"$bin" report "$fixtures/sweep_h200.log" "$fixtures/sweep_b200.log" --price-old 3 --price-new 6 -o "$art/report" >/dev/null
# Network off: every host resolves to nothing and every proxy connection fails.
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync
        --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND"
        --virtual-time-budget=15000)
"${chrome[@]}" --user-data-dir="$(mktemp -d)" --dump-dom "file://$art/report/report.html" 2>/dev/null > "$art/dom.html"
"${chrome[@]}" --user-data-dir="$(mktemp -d)" --window-size=1280,2000 --screenshot="$art/report.png" \
  "file://$art/report/report.html" 2>/dev/null || true
rendered=$(grep -o 'data-rendered="yes"' "$art/dom.html" | wc -l)
marks=$(grep -o 'class="mark-line' "$art/dom.html" | wc -l)
n_charts=$(grep -o 'id="chart-[a-z_]*"' "$art/dom.html" | wc -l)
echo "charts rendered: $rendered of $n_charts; line marks: $marks; screenshot: $art/report.png"
[ "$n_charts" -eq 5 ] || { echo "FAIL: $n_charts charts, not the five of a priced comparison" >&2; exit 1; }
[ "$rendered" -eq "$n_charts" ] || { echo "FAIL: not every chart rendered" >&2; grep -o 'chart failed[^<]*' "$art/dom.html" >&2 || true; exit 1; }
[ "$marks" -ge 4 ] || { echo "FAIL: charts without lines" >&2; exit 1; }
[ -s "$art/report.png" ] || { echo "FAIL: no screenshot" >&2; exit 1; }
# The answer first: the decision block comes before the charts, and the runs' differing software
# (torch differs between these fixtures) is named in the red alert.
decision=$(grep -bo 'id="decision"' "$art/dom.html" | head -1 | cut -d: -f1)
charts=$(grep -bo 'class="charts"' "$art/dom.html" | head -1 | cut -d: -f1)
[ -n "$decision" ] && [ -n "$charts" ] && [ "$decision" -lt "$charts" ] || { echo "FAIL: no decision block above the charts" >&2; exit 1; }
grep -q 'CHEAPER per token\|COSTS MORE per token' "$art/dom.html" || { echo "FAIL: the decision says nothing of cost" >&2; exit 1; }
grep -q 'id="stack-alert"[^>]*>SOFTWARE DIFFERS[^<]*torch' "$art/dom.html" || { echo "FAIL: no alert naming the software that differs" >&2; exit 1; }
# Labels from the page's bounding boxes: none overlapping in the report, and the check itself seen
# to fail on a copy with a label planted over another.
here=$(cd "$(dirname "$0")" && pwd)
verdict() {
  cp "$here/label_boxes.html" "$1/"
  "${chrome[@]}" --allow-file-access-from-files --user-data-dir="$(mktemp -d)" --dump-dom "file://$1/label_boxes.html" \
    2>/dev/null | grep -o '<pre id="verdict">[^<]*' | sed 's/<pre id="verdict">//'
}
ok=$(verdict "$art")
echo "labels: $ok"
case $ok in LABELS-OK*) ;; *) echo "FAIL: $ok" >&2; exit 1 ;; esac
mkdir -p "$art/planted" && cp -r "$art/report" "$art/planted/report"
plant="<script>const p = setInterval(() => { if (!document.querySelector('div.chart[data-rendered]')) return; clearInterval(p); const t = [...document.querySelector('div.chart svg').querySelectorAll('text')].find(e => e.textContent.trim()); const c = t.cloneNode(true); c.textContent = 'PLANTED'; t.parentNode.appendChild(c); }, 50);</script>"
# On the page's own closing line (the last but its digest): the libraries inlined above it hold
# the string </body> too.
closing=$(grep -n '</body></html>$' "$art/planted/report/report.html" | tail -1 | cut -d: -f1)
sed -i "$closing s|</body>|$plant</body>|" "$art/planted/report/report.html"
bad=$(verdict "$art/planted")
case $bad in LABELS-BAD*PLANTED*) ;; *) echo "FAIL: the label check did not catch a planted overlap: $bad" >&2; exit 1 ;; esac
for c in tflops speedup cost attention_share memory; do
  [ -s "$art/report/charts/$c.png" ] && [ -s "$art/report/charts/$c.svg" ] || { echo "FAIL: $c.png/.svg missing" >&2; exit 1; }
done
# decide's page of the guide's H200 and B200 figures (hand-written example data, two torch
# versions: compared with --force): the software mismatch first, then the verdict, above the
# charts; every table row tagged EXAMPLE DATA, none MEASURED; every chart rendered.
examples=$fixtures/../../data/examples
"$bin" decide "$examples/example_h200_handwritten.log" "$examples/example_b200_handwritten.log" --price-old 3.50 \
  --price-new 6.00 --force -o "$art/decide" >/dev/null
"${chrome[@]}" --user-data-dir="$(mktemp -d)" --dump-dom "file://$art/decide/report.html" 2>/dev/null > "$art/decide-dom.html"
lead=$(tr '\n' ' ' < "$art/decide-dom.html" | grep -o '<div id="decision"> *<h2>Verdict</h2> *<ul> *<li>[^<]*</li> *<li>[^<]*' | head -1)
case $lead in *"<li>SOFTWARE DIFFERS"*"<li>[EXAMPLE DATA] UPGRADE FOR LONG CONTEXT ONLY"*) ;;
  *) echo "FAIL: the decide page does not lead with the mismatch and the verdict: $lead" >&2; exit 1 ;; esac
body_rows=$(grep -o '<tr><td class="[lr]">' "$art/decide-dom.html" | wc -l)
tagged=$(grep -o '<td class="l">EXAMPLE DATA</td></tr>' "$art/decide-dom.html" | wc -l)
echo "decide page: $tagged of $body_rows table rows tagged EXAMPLE DATA"
[ "$body_rows" -gt 10 ] && [ "$tagged" -eq "$body_rows" ] || { echo "FAIL: a row of the decide page without its tag" >&2; exit 1; }
! grep -q 'MEASURED' "$art/decide-dom.html" || { echo "FAIL: example data called MEASURED on the decide page" >&2; exit 1; }
decide_rendered=$(grep -o 'data-rendered="yes"' "$art/decide-dom.html" | wc -l)
[ "$decide_rendered" -ge 4 ] || { echo "FAIL: the decide page's charts did not render ($decide_rendered)" >&2; exit 1; }
echo "PASS"
