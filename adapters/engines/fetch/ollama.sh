#!/bin/sh
# ollama.sh - ollama's fetch_model, run by `warden update` (README "The
# update step"): `ollama pull TAG` from the registry, as SiliconBench's
# install_ollama.sh does (never a bare GGUF import, which lost Qwen3's
# template), into the models of an engine whose HOME is HOME, then print
# {"sha256": HEX}: the digest of the manifest the pull stored, which is
# what ollama names the model by (`ollama list` shows its first 12 hex
# digits, /api/tags all of them), for warden to record and compare.
#
#   ollama.sh TAG HOME
#
# `ollama pull` talks to a server, so one is started for the pull with
# that HOME on a free port of 127.0.0.1 and stopped after. OLLAMA_MODELS,
# when set, is where the models live (ollama's own variable). Exit 0 ok, 1 the pull failed, 2 usage, 3 no ollama.
set -u
die() { code=$1; shift; echo "ollama.sh: $*" >&2; exit "$code"; }

[ $# -eq 2 ] && [ -n "$1" ] && [ -n "$2" ] || die 2 "usage: ollama.sh TAG HOME"
tag=$1
HOME=$2
export HOME
command -v ollama >/dev/null 2>&1 || die 3 "'ollama' is not on PATH"
command -v python3 >/dev/null 2>&1 || die 3 "python3 is needed"
mkdir -p "$HOME" || die 1 "cannot make '$HOME'"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    die 1 "no free port"
OLLAMA_HOST=127.0.0.1:$port
export OLLAMA_HOST

ollama serve >&2 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null' EXIT
i=0
until ollama list >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -le 60 ] || die 1 "the ollama server on port $port did not answer within 30 s"
	kill -0 "$server" 2>/dev/null || die 1 "the ollama server exited"
	sleep 0.5
done
ollama pull "$tag" >&2 || die 1 "ollama pull $tag failed"

# The manifest: MODELS/manifests/REGISTRY/NAMESPACE/MODEL/TAG, where a
# tag without a namespace is in "library" and one without ":" is "latest"
# (a registry named in the tag is matched by the glob).
python3 - "${OLLAMA_MODELS:-$HOME/.ollama/models}" "$tag" <<'PY' || exit 1
import glob, hashlib, json, os, sys
models, tag = sys.argv[1], sys.argv[2]
name, _, version = tag.partition(":")
version = version or "latest"
parts = name.split("/")[-2:]
if len(parts) == 1:
    parts = ["library"] + parts
found = glob.glob(os.path.join(models, "manifests", "*", *parts, version))
if len(found) != 1:
    sys.stderr.write("ollama.sh: %d manifests for %s under %s\n" % (len(found), tag, models))
    sys.exit(1)
with open(found[0], "rb") as f:
    print(json.dumps({"sha256": hashlib.sha256(f.read()).hexdigest()}))
PY
