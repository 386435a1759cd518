# cli_lib.sh - sourced by the tests/cli*.sh scripts: VREUSE (the binary, $1), SCENES (the shared
# test meshes), TMP (a scratch folder removed at exit), and the checks below. Each script ends
# with `cli_done`, which prints "N passed, M failed" and sets the exit status.
set -u
VREUSE=${1:?usage: tests/cli*.sh path/to/vreuse}
SCENES=${VR_SCENES:-$(dirname "$0")/../../shared/scenes}
TMP=$(mktemp -d)
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
pass=0 fail=0

ok() { echo "OK   cli/$1"; pass=$((pass + 1)); }
bad() {
    echo "FAIL cli/$1: $2"
    [ -f "$TMP/out" ] && head -20 "$TMP/out" | sed 's/^/    /'
    fail=$((fail + 1))
}

# expect NAME WANT_EXIT PATTERN -- CMD...: runs CMD, checks its exit code and that its combined
# output matches the extended regular expression PATTERN.
expect() {
    name=$1 want=$2 pattern=$3
    shift 4
    "$@" > "$TMP/out" 2>&1
    got=$?
    if [ "$got" -eq "$want" ] && grep -Eq -- "$pattern" "$TMP/out"; then
        ok "$name"
    else
        bad "$name" "exit $got (want $want), pattern '$pattern'; output:"
    fi
}

# unchanged NAME FILE CHECKSUM: FILE still has the md5 CHECKSUM taken before (inputs and
# unrelated files must survive a failed or refused command).
unchanged() {
    if [ "$(md5sum < "$2")" = "$3" ]; then ok "$1"; else bad "$1" "$2 was changed"; fi
}

cli_done() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
