package pinkeeper

import "strconv"

// PinList is a Wultra fingerprint list as served, bundled as fallback data or published in the
// cache: {"fingerprints": [...], "domainsConfig": {...}}. Unknown members are ignored at every level.
type PinList struct {
	Pins          []Pin
	DomainsConfig *DomainsConfig // nil when the list has none
}

// ParsePinList reads and type-checks a list as strict JSON. Every entry needs a string name, a
// standard-base64 fingerprint of 32 bytes and an integer expires; depth is optional (default
// 0, never negative); signature and key, when present, are strings (or null), given once.
func ParsePinList(data []byte) (PinList, error) {
	root, err := parseDocument(data)
	if err != nil {
		return PinList{}, err
	}
	return pinList(root)
}

// parseDocument is the document's root object, read as strict JSON.
func parseDocument(data []byte) (*jsonValue, error) {
	root, err := parseStrictJSON(data)
	if err != nil {
		return nil, err
	}
	if root.kind != jsonObject {
		return nil, listError("the document is not an object")
	}
	return root, nil
}

func pinList(root *jsonValue) (PinList, error) {
	entries, err := arrayMember(root, "fingerprints", "fingerprints")
	if err != nil {
		return PinList{}, err
	}
	list := PinList{Pins: make([]Pin, 0, len(entries))}
	for index, entry := range entries {
		pin, err := pinEntry(entry, "fingerprints["+strconv.Itoa(index)+"]")
		if err != nil {
			return PinList{}, err
		}
		list.Pins = append(list.Pins, pin)
	}
	domains, err := optionalMember(root, "domainsConfig", "domainsConfig")
	if err != nil || domains == nil {
		return list, err
	}
	list.DomainsConfig, err = domainsConfig(domains)
	return list, err
}

func pinEntry(value *jsonValue, path string) (Pin, error) {
	entry, err := asObject(value, path)
	if err != nil {
		return Pin{}, err
	}
	name, err := stringMember(entry, "name", path+".name")
	if err != nil {
		return Pin{}, err
	}
	encoded, err := stringMember(entry, "fingerprint", path+".fingerprint")
	if err != nil {
		return Pin{}, err
	}
	digest, ok := decodeDigest(encoded)
	if !ok {
		return Pin{}, listError(path + ".fingerprint is not the base64 of a 32-byte SHA-256 digest")
	}
	expires, err := integerMember(entry, "expires", path+".expires")
	if err != nil {
		return Pin{}, err
	}
	var depth int64
	depthValue, err := optionalMember(entry, "depth", path+".depth")
	if err != nil {
		return Pin{}, err
	}
	if depthValue != nil {
		if depth, err = asInteger(depthValue, path+".depth"); err != nil {
			return Pin{}, err
		}
		if depth < 0 {
			return Pin{}, listError(path + ".depth is negative")
		}
	}
	// Neither is used here, but a reader that did would read a repeated one differently.
	if err := optionalString(entry, "signature", path+".signature"); err != nil {
		return Pin{}, err
	}
	if err := optionalString(entry, "key", path+".key"); err != nil {
		return Pin{}, err
	}
	var fingerprint [32]byte
	copy(fingerprint[:], digest)
	return NewPin(name, fingerprint, expires, depth), nil
}

func domainsConfig(value *jsonValue) (*DomainsConfig, error) {
	object, err := asObject(value, "domainsConfig")
	if err != nil {
		return nil, err
	}
	if err := optionalString(object, "key", "domainsConfig.key"); err != nil {
		return nil, err
	}
	unlisted, err := boolMember(object, "sslPinningRequiredForUnlisted", "domainsConfig.sslPinningRequiredForUnlisted")
	if err != nil {
		return nil, err
	}
	listed, err := arrayMember(object, "domains", "domainsConfig.domains")
	if err != nil {
		return nil, err
	}
	config := &DomainsConfig{RequiredForUnlisted: unlisted, Domains: make([]Domain, 0, len(listed))}
	for index, item := range listed {
		path := "domainsConfig.domains[" + strconv.Itoa(index) + "]"
		domain, err := asObject(item, path)
		if err != nil {
			return nil, err
		}
		name, err := stringMember(domain, "name", path+".name")
		if err != nil {
			return nil, err
		}
		required, err := boolMember(domain, "sslPinningRequired", path+".sslPinningRequired")
		if err != nil {
			return nil, err
		}
		config.Domains = append(config.Domains, Domain{Name: name, Required: required})
	}
	return config, nil
}
