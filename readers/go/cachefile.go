package pinkeeper

import "strconv"

// CacheFormat is the pinkeeper.format this reader reads.
const CacheFormat = 1

// CacheFile is one version of a store's published file: a Wultra list plus pinkeeper's metadata.
type CacheFile struct {
	List     PinList
	Metadata Metadata
}

// Metadata is the file's "pinkeeper" object.
type Metadata struct {
	Format, Updated, NextUpdate int64
	Store, Source               string
	// Mode is "challenge" or "static"; ModeGiven is false when the daemon that wrote the file did
	// not say (absent or null: then it is read as "challenge").
	Mode      string
	ModeGiven bool
}

const otherVersion = " (another pinkeeper version wrote it: use the reader of the daemon's version)"

// ParseCacheFile reads a cache file's bytes: the list must satisfy ParsePinList, the metadata be
// complete, of format CacheFormat and of a known mode.
func ParseCacheFile(data []byte) (CacheFile, error) {
	root, err := parseDocument(data)
	if err != nil {
		return CacheFile{}, err
	}
	list, err := pinList(root)
	if err != nil {
		return CacheFile{}, err
	}
	node, err := optionalMember(root, "pinkeeper", "pinkeeper")
	if err != nil {
		return CacheFile{}, err
	}
	if node == nil {
		return CacheFile{}, &ListError{Code: CodeMissingMetadata, Reason: `the "pinkeeper" metadata object is missing`}
	}
	if _, err := asObject(node, "pinkeeper"); err != nil {
		return CacheFile{}, err
	}
	var metadata Metadata
	if metadata.Format, err = integerMember(node, "format", "pinkeeper.format"); err != nil {
		return CacheFile{}, err
	}
	if metadata.Store, err = stringMember(node, "store", "pinkeeper.store"); err != nil {
		return CacheFile{}, err
	}
	if metadata.Source, err = stringMember(node, "source", "pinkeeper.source"); err != nil {
		return CacheFile{}, err
	}
	if metadata.Updated, err = integerMember(node, "updated", "pinkeeper.updated"); err != nil {
		return CacheFile{}, err
	}
	if metadata.NextUpdate, err = integerMember(node, "nextUpdate", "pinkeeper.nextUpdate"); err != nil {
		return CacheFile{}, err
	}
	mode, err := optionalMember(node, "mode", "pinkeeper.mode")
	if err != nil {
		return CacheFile{}, err
	}
	if mode != nil {
		if metadata.Mode, err = asString(mode, "pinkeeper.mode"); err != nil {
			return CacheFile{}, err
		}
		metadata.ModeGiven = true
	}
	if metadata.Format != CacheFormat {
		return CacheFile{}, &ListError{Code: CodeUnsupportedFormat,
			Reason: "unsupported cache format " + strconv.FormatInt(metadata.Format, 10) + otherVersion}
	}
	// A mode nobody knows is refused, never guessed: read as either known mode, it could widen
	// trust or drop pins the writer meant.
	if metadata.ModeGiven && metadata.Mode != "challenge" && metadata.Mode != "static" {
		return CacheFile{}, &ListError{Code: CodeUnsupportedFormat,
			Reason: "unsupported pinkeeper.mode '" + Escaped(metadata.Mode) + "'" + otherVersion}
	}
	return CacheFile{List: list, Metadata: metadata}, nil
}

// OnlySignedFieldsCount reports whether only the signed part of each entry may be used. A static
// list's signatures cover name&fingerprint&expires, not depth or domainsConfig, so whoever could
// alter the list in transit could have set those. (Any other mode than static or challenge is
// refused by ParseCacheFile.)
func (c *CacheFile) OnlySignedFieldsCount() bool {
	return c.Metadata.ModeGiven && c.Metadata.Mode == "static"
}

// PinsInForce are the pins that take part in validation: in a static store only the depth-0 ones.
func (c *CacheFile) PinsInForce() []Pin {
	if !c.OnlySignedFieldsCount() {
		return c.List.Pins
	}
	var pins []Pin
	for _, pin := range c.List.Pins {
		if pin.Depth == 0 {
			pins = append(pins, pin)
		}
	}
	return pins
}

// DomainsConfigInForce is the domainsConfig that takes part in validation: none in a static store.
func (c *CacheFile) DomainsConfigInForce() *DomainsConfig {
	if c.OnlySignedFieldsCount() {
		return nil
	}
	return c.List.DomainsConfig
}
