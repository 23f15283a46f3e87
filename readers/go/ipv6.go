package pinkeeper

import (
	"strconv"
	"strings"
)

// canonicalIPv6 is an IPv6 literal, as inet_pton(AF_INET6) reads it, in its RFC 5952 form.
func canonicalIPv6(text string) (string, bool) {
	if strings.IndexByte(text, '%') >= 0 {
		return "", false // a zone id names an interface of this machine, not a host
	}
	groups, ok := parseIPv6(text)
	if !ok {
		return "", false
	}
	return formatIPv6(groups), true
}

// parseIPv6 reads up to eight groups of one to four hex digits, at most one "::" standing for at
// least one zero group, optionally ending in a dotted IPv4 address (parseIPv4) that fills the
// last two groups.
func parseIPv6(text string) ([8]uint16, bool) {
	var groups [8]uint16
	head, tail, compressed := text, "", false
	if at := strings.Index(text, "::"); at >= 0 {
		head, tail, compressed = text[:at], text[at+2:], true
		if strings.Contains(tail, "::") {
			return groups, false
		}
	}
	if !compressed {
		all, ok := ipv6Groups(text, true)
		if !ok || len(all) != 8 {
			return groups, false
		}
		copy(groups[:], all)
		return groups, true
	}
	front, ok := ipv6Groups(head, false) // a dotted part only ends the address
	if !ok {
		return groups, false
	}
	back, ok := ipv6Groups(tail, true)
	if !ok || len(front)+len(back) > 7 {
		return groups, false // "::" must stand for one zero group at least
	}
	copy(groups[:], front)
	copy(groups[8-len(back):], back)
	return groups, true
}

// ipv6Groups reads "g:g:…" (empty text: no group); the last part may be a dotted IPv4 address
// when dottedLast, counting as two groups.
func ipv6Groups(text string, dottedLast bool) ([]uint16, bool) {
	if text == "" {
		return nil, true
	}
	parts := strings.Split(text, ":")
	var groups []uint16
	for index, part := range parts {
		if dottedLast && index == len(parts)-1 && strings.IndexByte(part, '.') >= 0 {
			address, ok := parseIPv4(part)
			if !ok {
				return nil, false
			}
			return append(groups, uint16(address[0])<<8|uint16(address[1]), uint16(address[2])<<8|uint16(address[3])), true
		}
		if part == "" || len(part) > 4 {
			return nil, false
		}
		value, err := strconv.ParseUint(part, 16, 16)
		if err != nil {
			return nil, false
		}
		groups = append(groups, uint16(value))
	}
	return groups, len(groups) <= 8
}

// formatIPv6 is RFC 5952: lower-case hex without leading zeros, the longest run of two or more
// zero groups (the first of equally long ones) written "::"; an IPv4-mapped address
// (::ffff:0:0/96) as ::ffff:a.b.c.d, and no other address with a dotted part.
func formatIPv6(groups [8]uint16) string {
	if groups == [8]uint16{5: 0xffff, 6: groups[6], 7: groups[7]} {
		return "::ffff:" + strconv.Itoa(int(groups[6]>>8)) + "." + strconv.Itoa(int(groups[6]&0xff)) + "." +
			strconv.Itoa(int(groups[7]>>8)) + "." + strconv.Itoa(int(groups[7]&0xff))
	}
	runStart, runLength := -1, 1
	for start := 0; start < 8; {
		end := start
		for end < 8 && groups[end] == 0 {
			end++
		}
		if end-start > runLength {
			runStart, runLength = start, end-start
		}
		if end == start {
			end++
		}
		start = end
	}
	var out strings.Builder
	for index := 0; index < 8; index++ {
		if index == runStart {
			out.WriteString("::")
			index += runLength - 1
			continue
		}
		if index > 0 && index != runStart+runLength {
			out.WriteByte(':')
		}
		out.WriteString(strconv.FormatUint(uint64(groups[index]), 16))
	}
	return out.String()
}
