package main

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	pinkeeper "pinkeeper.local/reader"
)

// readChain is the certificates of a file as given, leaf first. Like `pinkeeper validate
// --certificate`, this checks an operator's file: it is no verified chain.
func readChain(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &exit{66, "certificate file " + path + " does not exist"}
	}
	if err != nil {
		return nil, &exit{66, "certificate file " + path + " cannot be read (check its permissions)"}
	}
	chain, err := pinkeeper.ParseCertificates(data)
	if err != nil {
		return nil, &exit{65, "certificate file " + path + ": " + err.Error()}
	}
	return chain, nil
}

// printChain writes one line per certificate: what an operator needs to write a list entry for it.
func printChain(out io.Writer, chain []*x509.Certificate, name string) {
	for index, certificate := range chain {
		subject := certificate.Subject.String()
		if subject == "" {
			subject = "(empty subject)"
		}
		fingerprint := pinkeeper.Fingerprint(certificate)
		notAfter := certificate.NotAfter.UTC()
		fmt.Fprintf(out, "depth %d: %s  sha256 %s  expires %d (%s)\n", index, pinkeeper.Escaped(subject),
			base64.StdEncoding.EncodeToString(fingerprint[:]), notAfter.Unix(), notAfter.Format("2006-01-02T15:04:05Z"))
	}
	if leafName, ok := pinkeeper.CommonName(chain[0]); ok && !pinkeeper.SameName(leafName, name) {
		fmt.Fprintln(out, "note: the leaf's common name '"+pinkeeper.Escaped(leafName)+"' differs from --name '"+
			pinkeeper.Escaped(name)+"': pins under either are compared, and pinning is skipped only if domainsConfig exempts both")
	}
}
