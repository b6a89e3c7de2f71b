#!/bin/sh
# t7006: snapshots handed in are untrusted. `gate --snapshot`, `publish
# --snapshot`, `verify` and `merge` check them with the signers and requirement of the policy on
# the official tip (never the working tree's); verify, gate and publish
# refuse any archive that is not byte for byte the one warden writes
# (reordered members, a second gzip member, trailing data) and bound what
# they read, refusing an oversized member by its header before its data.
. "$TOP_SRCDIR/tests/lib.sh"
. "$TOP_SRCDIR/tests/fixtures/engines/bench-setup.sh"
. "$TOP_SRCDIR/tests/fixtures/results/lib-results.sh"

# refused FILE PATTERN: gate and publish --snapshot exit 1 saying PATTERN,
# and official does not move.
refused() {
	tip=$(git -C bench rev-parse official) &&
	expect_exit 1 warden --repo bench gate --snapshot "$1" &&
	expect_grep "$2" err &&
	expect_exit 1 warden --repo bench publish --snapshot "$1" --sign-key key &&
	expect_grep "$2" err &&
	test "$(git -C bench rev-parse official)" = "$tip"
}

# archive OUT: a python tarfile/gzip job on stdin writing OUT
archive() {
	python3 - "$@"
}

test_expect_success_if "$(command -v ssh-keygen >/dev/null && echo yes)" \
    'setup: official requires snapshots signed by the maintainer' '
	publish_bench bench sima &&
	ssh-keygen -q -t ed25519 -N "" -C maint -f key &&
	ssh-keygen -q -t ed25519 -N "" -C other -f otherkey &&
	git -C bench checkout -q -B signers official &&
	echo "maintainer@example.org $(cat key.pub)" >bench/policy/allowed_signers &&
	bench_policy bench "publish={\"allowed_signers\": \"policy/allowed_signers\", \"require_signature\": true}" &&
	commit_all bench "maintainer: require signed snapshots" &&
	git -C bench branch -f official signers &&
	git -C bench checkout -q --detach official &&
	measure bench a &&
	warden --repo bench snapshot --sign-key key --output signed.tar.gz >/dev/null &&
	warden --repo bench snapshot --sign-key otherkey --output other.tar.gz >/dev/null &&
	test -z "$(git -C bench status --porcelain)"
'

test_expect_success 'a resealed unsigned snapshot with one number changed is refused by gate and publish' '
	cp -a bench forge &&
	sqlite3 forge/.warden/warden.db \
	    "UPDATE campaign_sweeps SET peak_engine_bytes = peak_engine_bytes + 1" &&
	bench_policy forge "publish={}" &&
	warden --repo forge snapshot --output forged.tar.gz >/dev/null &&
	expect_exit 0 warden verify forged.tar.gz &&
	refused forged.tar.gz "^warden: forged.tar.gz does not verify: removed member results/manifest.json.sig: policy requires a signed manifest$"
'

test_expect_success 'the working tree cannot relax the requirement or name other signers (gate, verify, merge)' '
	bench_policy bench "publish={\"allowed_signers\": \"mine\"}" &&
	echo "maintainer@example.org $(cat otherkey.pub)" >bench/mine &&
	expect_exit 1 warden --repo bench gate --snapshot forged.tar.gz &&
	expect_grep "policy requires a signed manifest" err &&
	expect_exit 1 warden --repo bench gate --snapshot other.tar.gz &&
	expect_grep "^warden: other.tar.gz does not verify: bad signature results/manifest.json.sig: no key of .official:policy/allowed_signers. made the signature" err &&
	expect_exit 1 warden --repo bench verify forged.tar.gz &&
	expect_grep "^forged.tar.gz: removed member results/manifest.json.sig: policy requires a signed manifest$" out &&
	expect_exit 1 warden --repo bench verify other.tar.gz &&
	expect_grep "^other.tar.gz: bad signature results/manifest.json.sig: no key of .official:policy/allowed_signers. made the signature" out &&
	expect_exit 0 warden --repo bench verify signed.tar.gz &&
	expect_grep "signed by maintainer@example.org$" out &&
	expect_exit 1 warden --repo bench merge other.tar.gz signed.tar.gz &&
	expect_grep "^warden: other.tar.gz does not verify: bad signature" err &&
	git -C bench checkout -q -- policy && rm bench/mine &&
	refused other.tar.gz "bad signature results/manifest.json.sig"
'

test_expect_success 'a snapshot signed by an allowed signer is gated and published' '
	expect_exit 0 warden --repo bench gate --snapshot signed.tar.gz &&
	tip=$(git -C bench rev-parse official) &&
	expect_exit 0 warden --repo bench publish --snapshot signed.tar.gz --sign-key key &&
	test "$(git -C bench rev-parse official^)" = "$tip" &&
	expect_exit 0 warden --repo bench verify "$(sed -n "s/^  archive   //p" out)" &&
	expect_grep "signed by maintainer@example.org$" out
'

test_expect_success 'reordered members: verify, gate and publish refuse' '
	git -C bench checkout -q --detach official &&
	archive signed.tar.gz reordered.tar.gz <<-\PY &&
	import io, sys, tarfile
	with tarfile.open(sys.argv[1], "r:gz") as t:
	    ms = [(m, t.extractfile(m).read()) for m in t.getmembers()]
	ms.insert(0, ms.pop())
	with tarfile.open(sys.argv[2], "w:gz", format=tarfile.USTAR_FORMAT) as t:
	    for m, d in ms:
	        t.addfile(m, io.BytesIO(d))
	PY
	expect_exit 1 warden --repo bench verify reordered.tar.gz &&
	expect_grep "^reordered.tar.gz: reordered members: .* before .*; warden writes members in path order$" out &&
	refused reordered.tar.gz "does not verify: reordered members: "
'

test_expect_success 'a second gzip member after the end of the archive: refused' '
	archive second.gz <<-\PY &&
	import gzip, io, sys, tarfile
	b = io.BytesIO()
	with tarfile.open(fileobj=b, mode="w", format=tarfile.USTAR_FORMAT) as t:
	    m = tarfile.TarInfo("results/extra.json")
	    m.size = 3
	    t.addfile(m, io.BytesIO(b"{}\n"))
	open(sys.argv[1], "wb").write(gzip.compress(b.getvalue()))
	PY
	cat signed.tar.gz second.gz >second.tar.gz &&
	n=$(wc -c <second.gz) &&
	expect_exit 1 warden --repo bench verify second.tar.gz &&
	expect_grep "^second.tar.gz: $n bytes after the end of the archive (from byte $(wc -c <signed.tar.gz)): warden writes one gzip member and nothing after it$" out &&
	refused second.tar.gz "does not verify: $n bytes after the end of the archive"
'

test_expect_success 'trailing garbage after the archive: refused' '
	cp signed.tar.gz trailing.tar.gz && printf "garbage" >>trailing.tar.gz &&
	expect_exit 1 warden --repo bench verify trailing.tar.gz &&
	expect_grep "^trailing.tar.gz: 7 bytes after the end of the archive" out &&
	refused trailing.tar.gz "does not verify: 7 bytes after the end"
'

test_expect_success 'the same members written another way (other headers, compression): refused' '
	archive signed.tar.gz rewritten.tar.gz <<-\PY &&
	import io, sys, tarfile
	with tarfile.open(sys.argv[1], "r:gz") as t:
	    ms = [(m, t.extractfile(m).read()) for m in t.getmembers()]
	with tarfile.open(sys.argv[2], "w:gz", format=tarfile.PAX_FORMAT) as t:
	    for m, d in ms:
	        t.addfile(m, io.BytesIO(d))
	PY
	expect_exit 1 warden --repo bench verify rewritten.tar.gz &&
	expect_grep "^rewritten.tar.gz: the archive is not the one warden writes of these members: it differs from byte [0-9]*" out &&
	refused rewritten.tar.gz "is not the one warden writes"
'

test_expect_success 'a member larger than the cap is refused by its header, before its data' '
	archive big.tar.gz <<-\PY &&
	import gzip, sys, tarfile
	m = tarfile.TarInfo("results/big.json")
	m.size = 300 << 20
	open(sys.argv[1], "wb").write(gzip.compress(m.tobuf(tarfile.USTAR_FORMAT)))
	PY
	expect_exit 1 warden verify big.tar.gz &&
	expect_grep "^warden: big.tar.gz: member .results/big.json. is 314572800 bytes, more than the 128 MiB warden reads of one member$" err &&
	refused big.tar.gz "member .results/big.json. is 314572800 bytes"
'

test_expect_success 'members over the total cap are refused naming the member and the cap' '
	archive many.tar.gz <<-\PY &&
	import io, sys, tarfile
	with tarfile.open(sys.argv[1], "w:gz", format=tarfile.USTAR_FORMAT) as t:
	    for n in "abcdefgh":
	        m = tarfile.TarInfo("results/%s.json" % n)
	        m.size = 200 << 10
	        t.addfile(m, io.BytesIO(bytes(m.size)))
	PY
	expect_exit 1 env WARDEN_SNAPSHOT_MAX_MIB=1 "$WARDEN" verify many.tar.gz &&
	expect_grep "^warden: many.tar.gz: member .results/f.json. (204800 bytes) brings the snapshot past the 1 MiB warden reads of one snapshot$" err &&
	expect_exit 1 env WARDEN_SNAPSHOT_MAX_MIB=999999 "$WARDEN" verify many.tar.gz &&
	expect_grep "removed member results/manifest.json" out &&
	head -c 1200000 /dev/urandom >noise.tar.gz &&
	expect_exit 2 env WARDEN_SNAPSHOT_MAX_MIB=1 "$WARDEN" verify noise.tar.gz &&
	expect_grep "^warden: snapshot: .*noise.tar.gz" err
'

test_expect_success 'the default bound: a third 100 MiB member is refused by its header' '
	archive huge.tar.gz <<-\PY &&
	import gzip, sys, tarfile
	with gzip.open(sys.argv[1], "wb", compresslevel=1) as g:
	    z = bytes(1 << 20)
	    for n in "abc":
	        m = tarfile.TarInfo("results/%s.json" % n)
	        m.size = 100 << 20
	        g.write(m.tobuf(tarfile.USTAR_FORMAT))
	        for i in range(100 if n != "c" else 0):
	            g.write(z)
	PY
	expect_exit 1 warden verify huge.tar.gz &&
	expect_grep "^warden: huge.tar.gz: member .results/c.json. (104857600 bytes) brings the snapshot past the 256 MiB warden reads of one snapshot$" err &&
	rm huge.tar.gz
'

test_expect_success 'a directory member is refused: warden writes files only' '
	archive dir.tar.gz <<-\PY &&
	import sys, tarfile
	with tarfile.open(sys.argv[1], "w:gz", format=tarfile.USTAR_FORMAT) as t:
	    m = tarfile.TarInfo("results/plots")
	    m.type = tarfile.DIRTYPE
	    t.addfile(m)
	PY
	expect_exit 1 warden verify dir.tar.gz &&
	expect_grep "member .results/plots/. is not a file warden writes" err
'

test_done
