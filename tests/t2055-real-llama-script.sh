#!/bin/sh
# t2055: ci/real-llama end to end, against a stand-in for llama.cpp: a git
# tree with b* tags, a CMakeLists.txt that asks git for the build number
# and commit at configure time (as llama.cpp's cmake/build-info.cmake
# does) and makes build/bin/llama-server, a script that reports them for
# --version and serves warden-simengine with llama-server's argv. The
# real llama-server is not built here; what the script does around it is:
# the model, the scratch bench, warden update of three tags, the campaign,
# the cycle, the figures and the verdict.
. "$TOP_SRCDIR/tests/lib.sh"

# It runs cmake (the adapter's build steps); it copies the committed tree
# (git archive HEAD) as its bench.
have=no
command -v cmake >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1 &&
    git -C "$TOP_SRCDIR" rev-parse --verify -q HEAD >/dev/null && have=yes

test_expect_success_if $have 'a stand-in llama.cpp tree, tagged b100' '
	git init -q llama &&
	mkdir llama/ggml && echo "a stand-in" >llama/ggml/README &&
	echo "llama.cpp stand-in" >llama/README.md &&
	cat >llama/CMakeLists.txt <<-\EOF &&
	cmake_minimum_required(VERSION 3.13)
	project(standin NONE)
	find_package(Git REQUIRED)
	execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD
	    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
	    OUTPUT_VARIABLE BUILD_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE)
	execute_process(COMMAND ${GIT_EXECUTABLE} rev-list --count HEAD
	    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
	    OUTPUT_VARIABLE BUILD_NUMBER OUTPUT_STRIP_TRAILING_WHITESPACE)
	configure_file(llama-server.in ${CMAKE_BINARY_DIR}/bin/llama-server @ONLY)
	add_custom_target(llama-server ALL
	    COMMAND chmod 755 ${CMAKE_BINARY_DIR}/bin/llama-server)
	EOF
	cat >llama/llama-server.in <<-EOF &&
	#!/bin/sh
	if [ "\$1" = --version ]; then
	    echo "version: @BUILD_NUMBER@ (@BUILD_COMMIT@)"
	    echo "built with a stand-in for llama.cpp"
	    exit 0
	fi
	model=sim host=127.0.0.1 port=8080
	while [ \$# -gt 0 ]; do
	    case \$1 in
	    --alias) model=\$2 ;;
	    --host) host=\$2 ;;
	    --port) port=\$2 ;;
	    -m|-ngl|--parallel|-c) ;;
	    *) echo "llama-server: unknown \$1" >&2; exit 2 ;;
	    esac
	    shift 2
	done
	exec "$SIMENGINE" --model "\$model" --host "\$host" --port "\$port" \\
	    --itl 1 --prefill-rate 200000 --output-tokens 16
	EOF
	(cd llama && git add -A && git commit -q -m "b99" && git tag b99 &&
	 echo >>README.md && git commit -q -am "b100" && git tag b100)
'

# A ccache of the test's, so the script installs nothing.
test_expect_success_if $have 'ci/real-llama runs, and its verdict is a pass' '
	mkdir tools && printf "#!/bin/sh\nexec \"\$@\"\n" >tools/ccache &&
	chmod +x tools/ccache &&
	PATH="$TEST_DIR/tools:$PATH" WARDEN_REAL_BUILD="$TOP_BUILDDIR" \
	    REAL_LLAMA_DIR="$TEST_DIR/run" REAL_LLAMA_LIMIT=8 \
	    "$TOP_SRCDIR/ci/real-llama" llama >run.out 2>run.err ||
	{ tail -40 run.out; cat run.err; false; } &&
	expect_grep "^ci/real-llama: working in $TEST_DIR/run$" run.out &&
	expect_grep "^sweeps under the gate.s completion line (90/100): 0 of 4$" run.out &&
	expect_grep "^failed without an answer from the engine: 0$" run.out &&
	expect_grep "^| 4 | complete | 8/8 | 3/3 |" run.out &&
	expect_grep "^| 4 | complete | 8/8 | 3/3 |" run/figures.md &&
	expect_grep "^llama-server b100 built by warden update" run/figures.md
'

# The last update built b102 (a README edit over b100) over the first
# work tree: llama-server names b102, as git in that tree counts it.
test_expect_success_if $have 'llama-server names the tag warden built last, not the bench' '
	b102=$(git -C run/upstream rev-parse --short b102) &&
	n=$(git -C run/upstream rev-list --count b102) &&
	expect_grep "^llama-server --version: version: $n ($b102) " run.out &&
	test "$(readlink run/bench/.warden/envs/llama.cpp/src)" = builds/work-a &&
	python3 - run <<-\PY
	import json, sys
	run = json.load(open(sys.argv[1] + "/run.json"))
	assert run["newest"] == "b100", run
	assert str(run["cycle_exit"]) in ("0", "1", "4"), run
	assert run["bench_commit"][:7] not in run["server_version"], run
	PY
'

test_expect_success_if $have 'its verdict again from the scratch directory' '
	expect_exit 0 "$TOP_SRCDIR/ci/real-llama" --verdict run &&
	expect_grep "^sweeps under the gate.s completion line (90/100): 0 of 4$" out
'

test_expect_success 'bad arguments: a directory that is not a llama.cpp tree' '
	expect_exit 2 "$TOP_SRCDIR/ci/real-llama" &&
	expect_grep "^usage: ci/real-llama LLAMA_TREE" err &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" nosuch &&
	expect_grep "nosuch: no such directory" err &&
	mkdir plain &&
	expect_exit 1 "$TOP_SRCDIR/ci/real-llama" plain &&
	expect_grep "not a git repository" err
'

test_done
