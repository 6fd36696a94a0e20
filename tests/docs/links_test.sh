#!/usr/bin/env bash
# Every relative link in the given Markdown files resolves: the file exists
# and, where the link names an anchor, the target has a heading whose
# GitHub anchor is that name. Links in code (fenced blocks, indented
# blocks, `spans`) are not links; http(s) and mailto links are not checked.
#
# usage: links_test.sh FILE.md...   (paths relative to the repository root)
set -uo pipefail

# GitHub's anchor for each heading of $1, one a line: lower case, spaces to
# hyphens, punctuation other than - and _ dropped, -1, -2... on repeats.
anchors() {
  gawk '
    /^```/ { fenced = !fenced; next }
    fenced || !/^#+ / { next }
    { h = $0; sub(/^#+ +/, "", h); h = tolower(h)
      gsub(/[^[:alnum:] _-]/, "", h); gsub(/ /, "-", h)
      print (seen[h]++ ? h "-" seen[h] - 1 : h) }' "$1"
}

# Each link target of $1, one a line.
links() {
  gawk '
    /^```/ { fenced = !fenced; next }
    fenced || /^    / { next }
    { line = $0; gsub(/`[^`]*`/, "", line)
      while (match(line, /\]\([^) ]+\)/)) {
        print substr(line, RSTART + 2, RLENGTH - 3); line = substr(line, RSTART + RLENGTH) } }' "$1"
}

failures=0
checked=0
for file in "$@"; do
  [ -f "$file" ] || { echo "missing input $file"; failures=$((failures + 1)); continue; }
  dir=$(dirname "$file")
  while IFS= read -r link; do
    case "$link" in http://* | https://* | mailto:*) continue ;; esac
    checked=$((checked + 1))
    path=${link%%#*}
    anchor=
    [ "$path" = "$link" ] || anchor=${link#*#}
    target=$file
    [ -z "$path" ] || target=$dir/$path
    if [ ! -e "$target" ]; then
      echo "$file: link to $link: no file $target"
      failures=$((failures + 1))
    elif [ -n "$anchor" ] && ! anchors "$target" | grep -xF -- "$anchor" >/dev/null; then
      echo "$file: link to $link: no heading with anchor #$anchor in $target"
      failures=$((failures + 1))
    fi
  done < <(links "$file")
done

echo "$checked links checked, $failures broken"
[ "$checked" -gt 0 ] && [ "$failures" -eq 0 ]
