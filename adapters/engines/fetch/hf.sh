#!/bin/sh
# hf.sh - an adapter's fetch_model for Hugging Face weights, run by
# `warden update` (README "The update step"): SiliconBench's
# scripts/download_model.sh, one `hf download` (huggingface_hub's CLI on
# PATH) per triple:
#
#   hf.sh file  REPO PATH   REPO's file basename(PATH) into dirname(PATH)
#   hf.sh dir   REPO DIR    all of REPO into DIR (--local-dir)
#   hf.sh cache REPO HOME   all of REPO into the Hugging Face cache of an
#                           engine whose HOME is HOME
#                           (HOME/.cache/huggingface/hub, warden's HF_HOME
#                           for it), then print {"dir": SNAPSHOT}, the
#                           snapshot directory hf printed, for warden to
#                           hash (only one cache triple, and last)
#
# Triples may follow one another (mistral.rs: its GGUF file, then its
# tokenizer's repository). hf's output goes to stderr; stdout carries only
# the JSON. Exit 0 ok, 1 a download failed, 2 usage.
set -u
die() { code=$1; shift; echo "hf.sh: $*" >&2; exit "$code"; }

[ $# -ge 3 ] || die 2 "usage: hf.sh file|dir|cache REPO PATH [file|dir|cache REPO PATH]..."
tmp=$(mktemp "${TMPDIR:-/tmp}/warden-hf.XXXXXX") || die 1 "mktemp failed"
trap 'rm -f "$tmp"' EXIT
while [ $# -gt 0 ]; do
	[ $# -ge 3 ] || die 2 "'$1' needs a repository and a path"
	mode=$1 repo=$2 dest=$3
	shift 3
	[ -n "$repo" ] && [ -n "$dest" ] || die 2 "$mode: empty repository or path"
	case $mode in
	file)
		hf download "$repo" "$(basename "$dest")" \
		    --local-dir "$(dirname "$dest")" >&2 ||
		    die 1 "hf download $repo $(basename "$dest") failed" ;;
	dir)
		hf download "$repo" --local-dir "$dest" >&2 ||
		    die 1 "hf download $repo failed" ;;
	cache)
		[ $# -eq 0 ] || die 2 "cache must be the last triple"
		hf download "$repo" --cache-dir "$dest/.cache/huggingface/hub" \
		    >"$tmp" || die 1 "hf download $repo failed"
		cat "$tmp" >&2
		snap=$(tail -n 1 "$tmp")
		[ -d "$snap" ] || die 1 "hf download $repo printed no directory ('$snap')"
		printf '{"dir": "%s"}\n' "$(printf '%s' "$snap" | sed 's/\\/\\\\/g; s/"/\\"/g')" ;;
	*)
		die 2 "unknown mode '$mode' (file, dir or cache)" ;;
	esac
done
