#!/bin/sh
# --json is accepted before and after the command name, and every command
# that prints data prints one JSON document on stdout with it.
. "$TOP_SRCDIR/tests/lib.sh"

# json_ok FILE: FILE is one JSON document.
json_ok() {
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1" || {
		echo "not JSON:"; cat "$1"; return 1; }
}

# both_positions CMD...: `warden --json CMD` and `warden CMD --json` exit
# alike and print the same JSON document (left in ./before, ./after).
both_positions() {
	_a=0; _b=0
	warden --json "$@" >before 2>err.before || _a=$?
	warden "$@" --json >after 2>err.after || _b=$?
	if [ "$_a" != "$_b" ]; then
		echo "exit $_a before, $_b after: $*"; cat err.before err.after
		return 1
	fi
	json_ok before && json_ok after && expect_equal before after
}

test_expect_success 'setup: a repository and a patch' '
	make_bench_repo bench &&
	sed "s/\"notes\": \"/\"notes\": \"Edited. /" \
	    bench/adapters/engines/example-sim.json >a.tmp &&
	cp a.tmp bench/adapters/engines/example-sim.json &&
	git -C bench diff >clean.patch &&
	git -C bench checkout -q -- .
'

test_expect_success 'version --json prints JSON in either position' '
	both_positions version &&
	python3 -c "
import json
d = json.load(open(\"after\"))
assert d[\"warden\"] and d[\"libraries\"][\"libgit2\"], d
"
'

test_expect_success 'help --json lists every command with its usage' '
	both_positions help &&
	python3 -c "
import json
d = json.load(open(\"after\"))
names = [c[\"name\"] for c in d[\"commands\"]]
assert \"lint\" in names and \"pr-check\" in names, names
assert all(c[\"usage\"] and c[\"summary\"] for c in d[\"commands\"])
assert [e[\"code\"] for e in d[\"exit_codes\"]] == [0, 1, 2, 3, 4], d
" &&
	both_positions help journal &&
	python3 -c "
import json
d = json.load(open(\"after\"))
assert d[\"name\"] == \"journal\" and len(d[\"usage\"]) == 5, d
"
'

test_expect_success 'lint --json in either position; entries carry file, line, column, field' '
	cd bench && both_positions lint &&
	python3 -c "
import json
d = json.load(open(\"after\"))
assert d[\"problems\"] == [] and d[\"files\"] == 6, d
" &&
	printf "{\"schema\": 2, \"name\": \"bad\"}" >adapters/profiles/bad.json &&
	both_positions lint adapters/profiles/bad.json &&
	python3 -c "
import json
d = json.load(open(\"after\"))
for p in d[\"problems\"]:
    for k in (\"file\", \"line\", \"column\", \"field\", \"message\", \"class\"):
        assert k in p, (k, p)
    assert p[\"class\"] == \"schema\", p
assert any(p[\"field\"] == \"schema\" and p[\"line\"] == 1 and p[\"column\"] > 1 for p in d[\"problems\"]), d
" && rm adapters/profiles/bad.json
'

test_expect_success 'journal show, verify and export --json in either position' '
	cd bench &&
	both_positions journal show &&
	python3 -c "import json; assert json.load(open(\"after\"))[0][\"kind\"] == \"repo.init\"" &&
	both_positions journal show --kind repo. &&
	both_positions journal verify &&
	python3 -c "import json; assert json.load(open(\"after\"))[\"intact\"] is True" &&
	warden journal export >/dev/null &&
	both_positions journal export &&
	python3 -c "import json; assert json.load(open(\"after\"))[\"appended\"] == 0"
'

test_expect_success 'global options between a command and its subcommand' '
	cd bench &&
	warden journal show --json >after &&
	warden journal --json show >between && expect_equal after between &&
	warden journal -q --repo . --json show >between && expect_equal after between &&
	warden review --json list >between && json_ok between
'

test_expect_success '--version takes --json before or after it' '
	warden --version --json >a && json_ok a &&
	warden --json --version >b && expect_equal a b
'

test_expect_success 'journal note --json after the command prints the seq' '
	cd bench &&
	warden journal note "a note" --json >out &&
	json_ok out &&
	python3 -c "import json; assert json.load(open(\"out\"))[\"seq\"] >= 2"
'

test_expect_success 'patch check --json in either position' '
	both_positions --repo bench patch check clean.patch &&
	python3 -c "
import json
d = json.load(open(\"after\"))
assert d[\"ok\"] is True
f = d[\"files\"][0]
assert f[\"added\"] == 1 and f[\"deleted\"] == 1, f
"
'

test_expect_success 'patch submit, review list, show and reject --json after the command' '
	warden --repo bench patch submit clean.patch --source agent --json >out &&
	json_ok out &&
	python3 -c "import json; assert json.load(open(\"out\"))[\"review\"] == 1" &&
	both_positions --repo bench review list &&
	both_positions --repo bench review show 1 &&
	warden --repo bench review reject 1 --reason no --json >out &&
	python3 -c "import json; assert json.load(open(\"out\"))[\"status\"] == \"rejected\""
'

test_expect_success 'pr-check --json equals --format json, in either position' '
	git -C bench checkout -q -b pr official &&
	git -C bench apply ../clean.patch && git -C bench commit -q -am edit &&
	git -C bench checkout -q - &&
	both_positions --repo bench pr-check official pr &&
	warden --repo bench pr-check official pr --format json >fmt &&
	expect_equal fmt after
'

test_expect_success 'pr-check refuses --json with another --format' '
	expect_exit 2 warden --repo bench pr-check official pr --json --format junit &&
	expect_grep "^warden: .*--json" err
'

test_expect_success 'init --json after the command' '
	warden init fresh --json >out && json_ok out &&
	python3 -c "import json; assert json.load(open(\"out\"))[\"official_branch\"] == \"official\""
'

test_expect_success 'status --json before the first cycle prints null' '
	warden --repo bench --json status >out &&
	python3 -c "import json; assert json.load(open(\"out\")) is None"
'

test_done
