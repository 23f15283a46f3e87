package pinkeeper

import "strings"

// RFC 3492 Punycode, encoding only: a label's Unicode scalars as the ASCII after "xn--". Written
// here because golang.org/x/net/idna is no part of the standard library, and it would map the
// label first (IDNA), which the one spelling of a host must not do.

const (
	punycodeBase        = 36
	punycodeTMin        = 1
	punycodeTMax        = 26
	punycodeSkew        = 38
	punycodeDamp        = 700
	punycodeInitialBias = 72
	punycodeInitialN    = 128
	punycodeMaximum     = 1<<31 - 1 // deltas beyond this overflow (RFC 3492, 6.4): refused
)

// punycode encodes label (valid UTF-8); false when a delta would overflow.
func punycode(label string) (string, bool) {
	scalars := []rune(label)
	var out strings.Builder
	for _, r := range scalars {
		if r < 0x80 {
			out.WriteRune(r)
		}
	}
	basic := out.Len()
	if basic > 0 {
		out.WriteByte('-')
	}
	n, delta, bias, handled := rune(punycodeInitialN), int64(0), punycodeInitialBias, basic
	for handled < len(scalars) {
		next := rune(0x7FFFFFFF)
		for _, r := range scalars {
			if r >= n && r < next {
				next = r
			}
		}
		delta += int64(next-n) * int64(handled+1)
		if delta > punycodeMaximum {
			return "", false
		}
		n = next
		for _, r := range scalars {
			if r < n {
				if delta++; delta > punycodeMaximum {
					return "", false
				}
			}
			if r == n {
				writePunycodeDelta(&out, delta, bias)
				bias = punycodeAdapt(delta, handled+1, handled == basic)
				delta = 0
				handled++
			}
		}
		delta++
		n++
	}
	return out.String(), true
}

// writePunycodeDelta writes delta as a generalized variable-length integer.
func writePunycodeDelta(out *strings.Builder, delta int64, bias int) {
	q := delta
	for k := punycodeBase; ; k += punycodeBase {
		t := int64(k - bias)
		if t < punycodeTMin {
			t = punycodeTMin
		} else if t > punycodeTMax {
			t = punycodeTMax
		}
		if q < t {
			out.WriteByte(punycodeDigit(q))
			return
		}
		out.WriteByte(punycodeDigit(t + (q-t)%(punycodeBase-t)))
		q = (q - t) / (punycodeBase - t)
	}
}

func punycodeAdapt(delta int64, points int, first bool) int {
	if first {
		delta /= punycodeDamp
	} else {
		delta /= 2
	}
	delta += delta / int64(points)
	k := 0
	for delta > ((punycodeBase-punycodeTMin)*punycodeTMax)/2 {
		delta /= punycodeBase - punycodeTMin
		k += punycodeBase
	}
	return k + int((punycodeBase-punycodeTMin+1)*delta/(delta+punycodeSkew))
}

// punycodeDigit: 0–25 are a–z, 26–35 are 0–9.
func punycodeDigit(digit int64) byte {
	if digit < 26 {
		return byte('a' + digit)
	}
	return byte('0' + digit - 26)
}
