package pinkeeper

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Benchmarks (docs/performance.md "How cost grows"), not tests: run them with
//   go test -run '^$' -bench . -benchtime 3s
// on a store of 2,000 pins (1,000 common names x 2), as the daemon publishes it.

const benchNames = 1000

func benchCacheFile(updated int) []byte {
	var entries []string
	for i := 0; i < benchNames; i++ {
		for j := 0; j < 2; j++ {
			digest := sha256.Sum256([]byte(fmt.Sprintf("cert-%d-%d", i, j)))
			entries = append(entries, fmt.Sprintf(`    {"name": "host%04d.example.com", "fingerprint": "%s", "expires": %d}`,
				i, base64.StdEncoding.EncodeToString(digest[:]), 4102444800-j*86400))
		}
	}
	return []byte("{\n  \"fingerprints\": [\n" + strings.Join(entries, ",\n") + "\n  ],\n" +
		fmt.Sprintf(`  "pinkeeper": {"format": 1, "store": "bench", "source": "https://pins.example.com/bench", `+
			`"updated": %d, "nextUpdate": 4102000000}`, updated) +
		"\n}\n")
}

// replace publishes data as the daemon does: a new file renamed over the old one (a new inode).
func replace(b *testing.B, path string, data []byte) {
	temporary := path + ".tmp"
	if err := os.WriteFile(temporary, data, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(temporary, path); err != nil {
		b.Fatal(err)
	}
}

type benchQuestion struct {
	names       PeerNames
	fingerprint []byte
}

// A third trusted, a third untrusted, a third for a name without pins.
func benchQuestions() []benchQuestion {
	var questions []benchQuestion
	for index := 0; index < 999; index++ {
		i, j := (index*7)%benchNames, index%2
		digest := sha256.Sum256([]byte(fmt.Sprintf("cert-%d-%d", i, j)))
		name := fmt.Sprintf("host%04d.example.com", i)
		switch index % 3 {
		case 0:
			questions = append(questions, benchQuestion{Host(name), digest[:]})
		case 1:
			questions = append(questions, benchQuestion{Host(name), digestOf(0xEE)})
		default:
			questions = append(questions, benchQuestion{Host(fmt.Sprintf("unknown-%d.example.com", index)), digest[:]})
		}
	}
	return questions
}

func benchReader(b *testing.B) (*Reader, string) {
	path := filepath.Join(b.TempDir(), "bench.json")
	replace(b, path, benchCacheFile(1763770000))
	reader, err := NewReader(path, "bench", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return reader, path
}

// One question on an unchanged file: the stat that looks for a new version, then the lookup.
func BenchmarkVerdictUnchangedFile(b *testing.B) {
	reader, _ := benchReader(b)
	questions := benchQuestions()
	now := time.Unix(1763770000, 0)
	if reader.Verdict(questions[0].names, questions[0].fingerprint, 0, now) != Trusted {
		b.Fatal("the first question is not trusted")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := questions[i%len(questions)]
		reader.Verdict(q.names, q.fingerprint, 0, now)
	}
}

// The first question after the file was replaced: stat, read, parse and index 2,000 pins.
func BenchmarkReloadAfterReplacement(b *testing.B) {
	reader, path := benchReader(b)
	versions := [][]byte{benchCacheFile(1763770001), benchCacheFile(1763770002)}
	q := benchQuestions()[0]
	now := time.Unix(1763770000, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		replace(b, path, versions[i%2])
		b.StartTimer()
		if reader.Verdict(q.names, q.fingerprint, 0, now) != Trusted {
			b.Fatal("not trusted after the reload")
		}
	}
}
