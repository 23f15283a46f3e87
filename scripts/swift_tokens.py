"""A light Swift tokenizer for scripts/check-layers.py: identifiers, numbers and punctuation with their line numbers.

Comments (`//`, nested `/* */`) and the text of string literals ("…", multi-line \"\"\"…\"\"\", raw #"…"# with any number of
#) are dropped, but the code inside an interpolation `\\(…)` (`\\#(…)` in a raw string) is kept, since it may name a
symbol. Keywords come out as identifiers; the caller tells them apart. Regular expression literals are not recognised
(the daemon has none). Standard library only.
"""

from collections import namedtuple

Token = namedtuple("Token", "kind text line")  # kind: "id", "number" or "punct"

IDENTIFIER_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
IDENTIFIER_PART = IDENTIFIER_START | set("0123456789")


class _Scanner:
    def __init__(self, text):
        self.text = text
        self.index = 0
        self.line = 1
        self.tokens = []

    def peek(self, offset=0):
        position = self.index + offset
        return self.text[position] if position < len(self.text) else ""

    def advance(self, count=1):
        for _ in range(count):
            if self.index < len(self.text) and self.text[self.index] == "\n":
                self.line += 1
            self.index += 1

    def starts_with(self, prefix):
        return self.text.startswith(prefix, self.index)

    def code(self, stop_at_paren=False):
        """Tokens until the end, or until the `)` that closes an interpolation when stop_at_paren."""
        depth = 0
        while self.index < len(self.text):
            char = self.peek()
            if char in " \t\r\n":
                self.advance()
            elif self.starts_with("//"):
                while self.index < len(self.text) and self.peek() != "\n":
                    self.advance()
            elif self.starts_with("/*"):
                self.block_comment()
            elif self.raw_string_hashes() is not None:
                self.string(self.raw_string_hashes())
            elif char in IDENTIFIER_START or char == "$" or char == "`":
                self.identifier()
            elif char.isdigit():
                self.number()
            else:
                if stop_at_paren and char == ")" and depth == 0:
                    self.advance()
                    return
                depth += {"(": 1, ")": -1}.get(char, 0)
                self.tokens.append(Token("punct", char, self.line))
                self.advance()

    def raw_string_hashes(self):
        """The number of `#` before a string literal's opening quote here, or None when no string starts here."""
        hashes = 0
        while self.peek(hashes) == "#":
            hashes += 1
        return hashes if self.peek(hashes) == '"' else None

    def block_comment(self):
        depth = 0
        while self.index < len(self.text):
            if self.starts_with("/*"):
                depth += 1
                self.advance(2)
            elif self.starts_with("*/"):
                depth -= 1
                self.advance(2)
                if depth == 0:
                    return
            else:
                self.advance()

    def string(self, hashes):
        self.advance(hashes)
        quotes = '"""' if self.starts_with('"""') else '"'
        self.advance(len(quotes))
        closing = quotes + "#" * hashes
        escape = "\\" + "#" * hashes
        self.tokens.append(Token("punct", '"', self.line))  # a string is an operand: `x."` never reads as member access
        while self.index < len(self.text):
            if self.starts_with(closing):
                self.advance(len(closing))
                return
            if self.starts_with(escape):
                self.advance(len(escape))
                if self.peek() == "(":
                    self.advance()
                    self.code(stop_at_paren=True)
                else:
                    self.advance()
            elif quotes == '"' and self.peek() == "\n":
                return  # an unterminated literal ends with its line, as the compiler would report it
            else:
                self.advance()

    def identifier(self):
        start, line = self.index, self.line
        if self.peek() == "`":
            self.advance()
            while self.index < len(self.text) and self.peek() not in "`\n":
                self.advance()
            self.advance()
            self.tokens.append(Token("id", self.text[start + 1:self.index - 1], line))
            return
        self.advance()
        while self.peek() in IDENTIFIER_PART and self.peek():
            self.advance()
        self.tokens.append(Token("id", self.text[start:self.index], line))

    def number(self):
        start, line = self.index, self.line
        while self.peek() and (self.peek() in IDENTIFIER_PART or (self.peek() == "." and self.peek(1).isdigit())):
            self.advance()
        self.tokens.append(Token("number", self.text[start:self.index], line))


def tokenize(text):
    """The tokens of a Swift source text, comments and string contents left out."""
    scanner = _Scanner(text)
    scanner.code()
    return scanner.tokens
