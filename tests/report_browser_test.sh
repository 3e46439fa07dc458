#!/bin/sh
# Renders a real HTML report in headless Chromium: a tune of three shapes (two strategies, so the
# convergence chart has several lines) and a bench, then `mmtune report`. Fails on any console
# message (the page logs nothing when all is well) or page error, or when a chart or the sortable
# table has no data. Saves a screenshot next to the report for people to look at.
#
#   report_browser_test.sh MMTUNE_BINARY OUTPUT_DIR
#
# Exits 77 (ctest: skipped) when Chromium is not installed; scripts/test.sh installs it.
set -eu
mmtune=$1
out=$2

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$candidate; break; fi
done
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium found (scripts/setup.sh --with-browser installs Debian's chromium)"
  exit 77
fi

rm -rf "$out"
mkdir -p "$out"
db="$out/tuned.db"
for strategy in random local; do
  env -u MMTUNE_ISA "$mmtune" tune --db "$db" --shapes 48x48x48,1x64x64,200x160x96 \
    --strategy "$strategy" --evals 6 --budget 0 --seed 5 >"$out/tune-$strategy.log" 2>&1
done
env -u MMTUNE_ISA "$mmtune" bench --db "$db" --shapes 48x48x48,200x160x96 --repetitions 1 \
  --min-time 0.01 --json "$out/bench.json" >"$out/bench.log" 2>&1
"$mmtune" report --db "$db" --bench "$out/bench.json" --html "$out/report.html" \
  --json "$out/report.json"

# Chromium wants a writable home and profile; the sandbox needs privileges CI containers lack.
export HOME="$out/home"
mkdir -p "$HOME"
run_browser() {
  timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$out/profile" --hide-scrollbars --enable-logging=stderr --v=0 "$@"
}
run_browser --dump-dom "file://$out/report.html" >"$out/dom.html" 2>"$out/browser.log"
run_browser --window-size=1280,4800 --screenshot="$out/report.png" "file://$out/report.html" \
  >/dev/null 2>"$out/screenshot.log"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Chromium writes every console message of the page to its log as INFO:CONSOLE.
if grep -q 'CONSOLE' "$out/browser.log"; then
  fail "console messages:"
  grep 'CONSOLE' "$out/browser.log"
fi
body=$(grep -o '<body[^>]*>' "$out/dom.html" || true)
echo "page: $body"
case "$body" in
  *'data-report-errors="0"'*) ;;
  *) fail "the page reported errors: $(grep -o '<li>page error[^<]*' "$out/dom.html" || true)" ;;
esac
case "$body" in
  *'data-charts-ready="4"'*'data-charts-total="4"'*) ;;
  *) fail "not all four charts were drawn with data" ;;
esac
for chart in chart-speed chart-roofline chart-convergence chart-landscape; do
  points=$(grep -o "id=\"$chart\" data-points=\"[0-9]*\"" "$out/dom.html" | grep -o '[0-9]*"$' |
           tr -d '"')
  echo "$chart: ${points:-?} points"
  [ "${points:-0}" -gt 0 ] || fail "$chart has no data"
done
# Three tuned shapes, each searched by two strategies: six convergence lines.
series=$(grep -o 'id="chart-convergence" data-points="[0-9]*" data-series="[0-9]*"' "$out/dom.html" |
         grep -o '[0-9]*"$' | tr -d '"')
[ "${series:-0}" -eq 6 ] || fail "the convergence chart has ${series:-no} lines, expected 6"
grep -q 'data-sortable="ready"' "$out/dom.html" || fail "the winners table is not sortable"
rows=$(grep -o 'id="winners-table" class="sortable" data-rows="[0-9]*"' "$out/dom.html" |
       grep -o '[0-9]*"$' | tr -d '"')
[ "${rows:-0}" -eq 3 ] || fail "the winners table has ${rows:-no} rows, expected 3"
[ -s "$out/report.png" ] || fail "no screenshot was written"

if [ "$failures" -gt 0 ]; then
  echo "report, DOM and logs are in $out"
  exit 1
fi
echo "OK: report rendered in $browser; screenshot $out/report.png"
