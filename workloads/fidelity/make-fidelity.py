#!/usr/bin/env python3
"""make-fidelity.py - generate the synthetic fidelity task of warden.

A classification task of the shape of SiliconBench's GMRID (supply-chain
incident texts, 8 classes, 0-shot and 5-shot with fixed exemplars), but
synthetic and smaller: 240 items (30 per class) instead of GMRID's 1,146,
so that the repository and the tests stay small. The texts are made up
from templates; they are not real incidents. The real task is loaded from
its own directory in the same format (warden fidelity --task DIR).

Deterministic: a fixed seed, no clock, no environment; the same script
always writes the same bytes (task.json, items.jsonl, exemplars.jsonl).

usage: make-fidelity.py [OUTDIR]     (default: the script's directory)
"""
import json
import os
import random
import sys

SEED = 20261203
PER_CLASS = 30

LABELS = [
    "typosquat",
    "dependency confusion",
    "malicious update",
    "account takeover",
    "build compromise",
    "protestware",
    "repository hijack",
    "secret leak",
]

ECOSYSTEMS = ["npm", "PyPI", "RubyGems", "crates.io", "Maven Central",
              "NuGet", "Packagist", "Go modules"]
WORDS = ["fast", "json", "http", "auth", "color", "date", "yaml", "log",
         "cache", "crypto", "parse", "stream", "image", "math", "test",
         "config", "query", "socket", "retry", "token"]
PAYLOADS = ["stole environment variables", "opened a reverse shell",
            "downloaded a second-stage binary", "mined cryptocurrency",
            "exfiltrated SSH keys", "read browser cookies",
            "posted AWS credentials to a remote host"]

TEMPLATES = {
    "typosquat": [
        "A package named {typo} appeared on {eco}, one character away from "
        "the popular {name}. Its install script {payload}.",
        "Developers who mistyped {name} as {typo} on {eco} installed a copy "
        "whose setup hook {payload}.",
    ],
    "dependency confusion": [
        "An attacker published {internal} to the public {eco} index with a "
        "higher version than the company's private package of the same "
        "name; build machines fetched the public one, which {payload}.",
        "Internal builds resolved {internal} from {eco} instead of the "
        "private registry because the public version number was larger; "
        "the package {payload}.",
    ],
    "malicious update": [
        "Version {version} of the long-established {name} on {eco} shipped a "
        "new obfuscated file that {payload}; earlier versions were clean.",
        "The maintainers of {name} released {version} to {eco}; the release "
        "added code that {payload} on import.",
    ],
    "account takeover": [
        "The {eco} account of a {name} maintainer was taken over through a "
        "reused password without two-factor authentication, and the "
        "attacker published a release that {payload}.",
        "After a phishing mail captured a maintainer's session, someone "
        "else logged in as the owner of {name} on {eco} and changed the "
        "recovery e-mail.",
    ],
    "build compromise": [
        "The CI pipeline that builds {name} was modified so that the "
        "published {eco} artifact differed from the tagged source; the "
        "injected step {payload}.",
        "A poisoned build cache in the release workflow of {name} inserted "
        "code into the {eco} package that is not in the repository.",
    ],
    "protestware": [
        "The author of {name} added code to version {version} on {eco} that "
        "prints a political message and deletes files when the machine's "
        "locale matches a chosen country.",
        "A release of {name} deliberately sabotaged users in one region as a "
        "protest by its own maintainer, wiping data in {eco} installs.",
    ],
    "repository hijack": [
        "The GitHub organisation of {name} was renamed and its old name "
        "re-registered by a stranger, who pushed a look-alike repository "
        "that {eco} builds then pulled.",
        "An expired domain in the maintainer e-mail of {name} was bought by "
        "an attacker, who reset the password and took the source "
        "repository that feeds {eco}.",
    ],
    "secret leak": [
        "The {eco} package {name} {version} accidentally included a .env "
        "file with the project's cloud API keys and database password.",
        "A debug log committed to the {name} repository exposed a publishing "
        "token for {eco}, which was revoked two days later.",
    ],
}


def fill(rng, label):
    name = rng.choice(WORDS) + "-" + rng.choice(WORDS)
    pos = rng.randrange(len(name))
    typo = name[:pos] + rng.choice("aeiourst") + name[pos + 1:]
    if typo == name:
        typo = name + "s"
    return rng.choice(TEMPLATES[label]).format(
        name=name, typo=typo, eco=rng.choice(ECOSYSTEMS),
        payload=rng.choice(PAYLOADS),
        internal="@corp/" + rng.choice(WORDS) + "-" + rng.choice(WORDS),
        version="%d.%d.%d" % (rng.randrange(1, 9), rng.randrange(30),
                              rng.randrange(20)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    rng = random.Random(SEED)
    task = {
        "schema": 1,
        "name": "gmrid-synthetic",
        "synthetic": True,
        "note": "a synthetic task of GMRID's shape (8 classes, fixed 5-shot "
                "exemplars); 240 items instead of 1,146",
        "labels": LABELS,
        "system": "You are a security analyst who labels software "
                  "supply-chain incidents.",
        "template": "Classify this software supply-chain incident into "
                    "exactly one of these categories: {labels}.\n"
                    "Reply with the category name only.\n\n"
                    "Incident: {text}\n\nCLASSIFY id={id}",
        "max_tokens": 16,
    }
    with open(os.path.join(out, "task.json"), "w") as f:
        json.dump(task, f, indent=2, sort_keys=True)
        f.write("\n")
    # five exemplars of five different classes, outside the scored items
    with open(os.path.join(out, "exemplars.jsonl"), "w") as f:
        for i, label in enumerate([LABELS[0], LABELS[2], LABELS[1],
                                   LABELS[7], LABELS[4]]):
            f.write(json.dumps({"id": "gmrid-ex-%d" % (i + 1),
                                "text": fill(rng, label), "label": label},
                               sort_keys=True) + "\n")
    items = [label for label in LABELS for _ in range(PER_CLASS)]
    rng.shuffle(items)
    with open(os.path.join(out, "items.jsonl"), "w") as f:
        for i, label in enumerate(items):
            f.write(json.dumps({"id": "gmrid-%04d" % (i + 1),
                                "text": fill(rng, label), "label": label},
                               sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
