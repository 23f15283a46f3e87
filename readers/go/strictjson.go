package pinkeeper

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maximumDepth is the deepest nesting accepted, the document's own object counting as 1.
const maximumDepth = 512

type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
	jsonRepeated // stands for a member given more than once in its object
)

// jsonValue is one parsed value. A number keeps its literal text: a field is an integer only
// when written as one.
type jsonValue struct {
	kind    jsonKind
	text    string // a string's value, a number's literal
	boolean bool
	items   []*jsonValue
	members map[string]*jsonValue
}

// repeatedMember replaces a member given twice in one object: parsers disagree on which
// occurrence counts, so a member that is read must appear once (jsonFields refuses it); an
// unknown one stays ignored.
var repeatedMember = &jsonValue{kind: jsonRepeated}

// parseStrictJSON reads data as strict JSON (RFC 8259), as the Swift reader does. Go's
// encoding/json would accept much of what this refuses (it replaces invalid UTF-8 and lone
// surrogates with U+FFFD and keeps the last of two equal members): UTF-8 only, without a byte
// order mark; no lone surrogate escape, raw control character, NaN or Infinity, leading zero,
// trailing comma or data after the document; at most maximumDepth levels.
func parseStrictJSON(data []byte) (*jsonValue, error) {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return nil, notJSON("not valid JSON (starts with a UTF-8 byte order mark)")
	}
	// utf8.Valid refuses overlong forms, encoded surrogates and anything beyond U+10FFFF.
	if !utf8.Valid(data) {
		return nil, notJSON("not valid JSON (invalid UTF-8)")
	}
	p := &jsonParser{data: data}
	p.space()
	if p.at >= len(data) {
		return nil, notJSON("not valid JSON (no document)")
	}
	root, err := p.value(1)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.at < len(data) {
		return nil, notJSON("not valid JSON (more data after the document)")
	}
	return root, nil
}

type jsonParser struct {
	data []byte
	at   int
}

func (p *jsonParser) fail(what string) error {
	return notJSON("not valid JSON (" + what + " at byte " + strconv.Itoa(p.at) + ")")
}

func (p *jsonParser) space() {
	for p.at < len(p.data) {
		switch p.data[p.at] {
		case ' ', '\t', '\n', '\r':
			p.at++
		default:
			return
		}
	}
}

// value parses the value at p.at; depth is the nesting level a container opened here would have.
func (p *jsonParser) value(depth int) (*jsonValue, error) {
	if p.at >= len(p.data) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.data[p.at]; {
	case c == '{' || c == '[':
		if depth > maximumDepth {
			return nil, notJSON("not valid JSON (nested deeper than " + strconv.Itoa(maximumDepth) + " levels)")
		}
		if c == '{' {
			return p.object(depth)
		}
		return p.array(depth)
	case c == '"':
		text, err := p.string()
		return &jsonValue{kind: jsonString, text: text}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, literal := range []struct {
			text  string
			value *jsonValue
		}{{"true", &jsonValue{kind: jsonBool, boolean: true}}, {"false", &jsonValue{kind: jsonBool}}, {"null", &jsonValue{kind: jsonNull}}} {
			if len(p.data)-p.at >= len(literal.text) && string(p.data[p.at:p.at+len(literal.text)]) == literal.text {
				p.at += len(literal.text)
				return literal.value, nil
			}
		}
		return nil, p.fail("unexpected character")
	}
}

func (p *jsonParser) object(depth int) (*jsonValue, error) {
	object := &jsonValue{kind: jsonObject, members: map[string]*jsonValue{}}
	err := p.elements('}', func() error {
		if p.at >= len(p.data) || p.data[p.at] != '"' {
			return p.fail("expected a member name")
		}
		name, err := p.string()
		if err != nil {
			return err
		}
		p.space()
		if p.at >= len(p.data) || p.data[p.at] != ':' {
			return p.fail("expected ':'")
		}
		p.at++
		p.space()
		value, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		// Names compare after unescaping: "name" and "n\u0061me" are one member given twice.
		if _, given := object.members[name]; given {
			object.members[name] = repeatedMember
		} else {
			object.members[name] = value
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return object, nil
}

func (p *jsonParser) array(depth int) (*jsonValue, error) {
	array := &jsonValue{kind: jsonArray}
	err := p.elements(']', func() error {
		item, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		array.items = append(array.items, item)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return array, nil
}

// elements reads a container from its opening bracket at p.at to closer, past it: element
// reads one member or item (white space before it skipped), then a ',' or the closer follows.
func (p *jsonParser) elements(closer byte, element func() error) error {
	p.at++ // { or [
	p.space()
	if p.at < len(p.data) && p.data[p.at] == closer {
		p.at++
		return nil
	}
	for {
		p.space()
		if err := element(); err != nil {
			return err
		}
		p.space()
		if p.at >= len(p.data) {
			return p.fail("unexpected end")
		}
		switch p.data[p.at] {
		case ',':
			p.at++
		case closer:
			p.at++
			return nil
		default:
			return p.fail("expected ',' or '" + string(closer) + "'")
		}
	}
}

// number checks the RFC 8259 grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() (*jsonValue, error) {
	start := p.at
	if p.data[p.at] == '-' {
		p.at++
	}
	switch {
	case p.at < len(p.data) && p.data[p.at] == '0':
		p.at++
	case p.digits() == 0:
		return nil, p.fail("invalid number")
	}
	if p.at < len(p.data) && p.data[p.at] == '.' {
		p.at++
		if p.digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.at < len(p.data) && (p.data[p.at] == 'e' || p.data[p.at] == 'E') {
		p.at++
		if p.at < len(p.data) && (p.data[p.at] == '+' || p.data[p.at] == '-') {
			p.at++
		}
		if p.digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	// "01" is a 0 followed by more data: refused where the container expects ',' (or at the end).
	return &jsonValue{kind: jsonNumber, text: string(p.data[start:p.at])}, nil
}

func (p *jsonParser) digits() int {
	start := p.at
	for p.at < len(p.data) && p.data[p.at] >= '0' && p.data[p.at] <= '9' {
		p.at++
	}
	return p.at - start
}

// string reads a string at p.at (the opening quote). The bytes are valid UTF-8 already, so a
// surrogate can only come from an escape: it must be a high one directly followed by a low one.
func (p *jsonParser) string() (string, error) {
	p.at++ // "
	start := p.at
	for p.at < len(p.data) && p.data[p.at] != '"' && p.data[p.at] != '\\' && p.data[p.at] >= 0x20 {
		p.at++
	}
	if p.at < len(p.data) && p.data[p.at] == '"' {
		text := string(p.data[start:p.at])
		p.at++
		return text, nil
	}
	out := append([]byte(nil), p.data[start:p.at]...)
	for {
		if p.at >= len(p.data) {
			return "", p.fail("unterminated string")
		}
		c := p.data[p.at]
		switch {
		case c == '"':
			p.at++
			return string(out), nil
		case c < 0x20:
			return "", p.fail("raw control character in a string")
		case c != '\\':
			out = append(out, c)
			p.at++
			continue
		}
		p.at++ // backslash
		if p.at >= len(p.data) {
			return "", p.fail("unterminated string")
		}
		escape := p.data[p.at]
		p.at++
		switch escape {
		case '"', '\\', '/':
			out = append(out, escape)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := p.unicodeEscape()
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.fail("invalid escape")
		}
	}
}

// unicodeEscape reads the XXXX of \uXXXX (and of a following low surrogate's escape).
func (p *jsonParser) unicodeEscape() (rune, error) {
	first, ok := p.hex4()
	if !ok {
		return 0, p.fail("invalid \\u escape")
	}
	if !utf16.IsSurrogate(first) {
		return first, nil
	}
	if first < 0xDC00 && len(p.data)-p.at >= 6 && p.data[p.at] == '\\' && p.data[p.at+1] == 'u' {
		p.at += 2
		second, ok := p.hex4()
		if ok && second >= 0xDC00 && second <= 0xDFFF {
			return utf16.DecodeRune(first, second), nil
		}
	}
	return 0, notJSON("not valid JSON (a lone surrogate escape)")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.data)-p.at < 4 {
		return 0, false
	}
	value, err := strconv.ParseUint(string(p.data[p.at:p.at+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.at += 4
	return rune(value), true
}
