#!/usr/bin/env python3
"""The harness's own tests: that it reads words as the README says, writes what a case says, makes
the same inputs from the same seed, and fails on a command that lies (a real process here)."""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import contextlib
import io
import json
import random
import stat
import tempfile
import unittest
from pathlib import Path

import deciders
import differential
import file_mutations
import json_tree
import play_commands
import scenario

TABLE = json.loads(play_commands.TABLE.read_text("utf-8"))
LIAR = "import sys\nprint('trusted')\n"  # a command that trusts everything


class Words(unittest.TestCase):
    def test_verdicts_start_standard_output(self):
        self.assertEqual(deciders.word_of(0, "trusted\n", ""), "trusted")
        self.assertEqual(deciders.word_of(1, "untrusted: store 'banking' pins 'a', but not this certificate\n", ""), "untrusted")
        self.assertEqual(deciders.word_of(2, "empty", ""), "empty")

    def test_anything_else_is_quoted_and_matches_no_word(self):
        for status, stdout in ((0, "trustedx\n"), (0, "depth 0: sha256 x\ntrusted\n"), (1, " untrusted\n"), (2, "")):
            self.assertNotIn(deciders.word_of(status, stdout, ""), deciders.VERDICTS)

    def test_errors_are_the_word_after_pinkeeper_on_standard_error(self):
        self.assertEqual(deciders.word_of(65, "", "pinkeeper: invalid-content: store 'banking': ...\n"), "invalid-content")
        self.assertEqual(deciders.word_of(64, "", "pinkeeper: usage: --depth must be digits\nusage: ...\n"), "usage")
        self.assertEqual(deciders.word_of(74, "", "pinkeeper: missing\n"), "missing")
        self.assertEqual(deciders.word_of(64, "", "Error: Missing value\npinkeeper: usage\n"), "'Error: Missing value'")


class Trees(unittest.TestCase):
    def test_duplicates_and_number_spellings_survive(self):
        text = b'{"a": 1.0, "a": [1e3, -0, 18446744073709551616], "b": {"c": NaN}}'
        self.assertEqual(json_tree.encode(json_tree.parse(text)), text)

    def test_lone_surrogates_stay_escapes(self):
        self.assertEqual(json_tree.encode(json_tree.parse(b'["\\ud800x"]')), b'["\\ud800x"]')


class Inputs(unittest.TestCase):
    def test_an_input_is_the_same_from_the_same_seed_and_number(self):
        seeds = differential.file_seeds(TABLE)
        first = [differential.make_input(7, index, TABLE, seeds) for index in range(20)]
        again = [differential.make_input(7, index, TABLE, seeds) for index in range(20)]
        self.assertEqual(first, again)
        self.assertGreater(len({json.dumps(case, sort_keys=True) for case in first}), 15)

    def test_thousands_of_inputs_can_be_made(self):
        seeds = differential.file_seeds(TABLE)
        for index in range(3000):
            differential.make_input(11, index, TABLE, seeds)

    def test_mutations_touch_the_file(self):
        rng = random.Random(3)
        origin = scenario.last_version(differential.file_seeds(TABLE)[0])
        changed = 0
        for _ in range(50):
            variant = file_mutations.Variant(origin)
            file_mutations.mutate(rng, variant, 1)
            changed += (variant.cache, variant.cache_mode, variant.directory_mode) != (origin, 0o644, 0o755)
        self.assertGreater(changed, 45)


class Files(unittest.TestCase):
    def test_a_verified_chain_becomes_certificates_whose_fingerprints_the_file_pins(self):
        case = next(c for c in TABLE["cases"] if c["id"] == "verified-chain-intermediate-pin")
        with tempfile.TemporaryDirectory() as directory:
            files = scenario.from_case(case, Path(directory))
            chain = Path(files.question[1]).read_text("ascii")
            self.assertEqual(chain.count("BEGIN CERTIFICATE"), len(case["question"]["verified_chain"]))
            for old in case["question"]["verified_chain"]:
                self.assertNotIn(old.encode(), files.cache)

    def test_modes_are_the_cases(self):
        case = next(c for c in TABLE["cases"] if c["id"] == "world-writable-cache-file-keeps-last-good-pins")
        with tempfile.TemporaryDirectory() as directory:
            scenario.write(scenario.from_case(case, Path(directory)), Path(directory) / "w")
            written = Path(directory) / "w" / "cache" / "banking.json"
            self.assertEqual(stat.S_IMODE(written.stat().st_mode), 0o666)


class ALyingCommandFails(unittest.TestCase):
    def setUp(self):
        self.directory = Path(tempfile.mkdtemp(prefix="pinkeeper-harness-test-"))
        (self.directory / "liar.py").write_text(LIAR)
        self.addCleanup(play_commands.remove_tree, self.directory)
        self.liar = deciders.Decider("liar", (sys.executable, str(self.directory / "liar.py"), "validate"), "nothing",
                                     clock_variable="PINKEEPER_READER_TEST_NOW")

    def test_against_the_table(self):
        case = next(c for c in TABLE["cases"] if c["expected_command"]["word"] == "untrusted")
        tally, printed = play_commands.Tally(), io.StringIO()
        with contextlib.redirect_stdout(printed):
            play_commands.play(case["id"], scenario.from_case(case, self.directory), case["expected_command"],
                               [self.liar], self.directory, tally)
        self.assertEqual((tally.passed, tally.failed), (0, 1))
        self.assertTrue(printed.getvalue().startswith(f"FAIL liar {case['id']}: expected 1 untrusted, got 0 trusted"))

    def test_at_the_clock_check(self):
        # It says trusted a second after the pin expired: its clock cannot be the case's.
        problem = play_commands.clock_check(self.liar, TABLE, self.directory)
        self.assertTrue(problem.startswith("FAIL liar clock-check: at "), problem)

    def test_against_the_reference(self):
        args = scenario.write(scenario.Scenario(name="a.example", question=["--fingerprint", "x"], now=1), self.directory / "w")
        answers = {deciders.REFERENCE: deciders.Answer(1, "untrusted", "untrusted\n", "", 0.1),
                   "liar": deciders.run(self.liar, args, 1, self.directory)}
        lines = differential.judge({"id": "differential-1-2", "description": "test"}, answers)
        self.assertEqual(lines, ["SECURITY DIVERGENCE liar differential-1-2: trusted where swift 1 untrusted, liar 0 trusted [test]"])


if __name__ == "__main__":
    unittest.main()
