package pinkeeper

import "strconv"

// Typed, strict access to a parsed document: a field of the wrong JSON type is an error naming
// its path, never a conversion.

func asObject(value *jsonValue, path string) (*jsonValue, error) {
	if value.kind != jsonObject {
		return nil, listError(path + " is not an object")
	}
	return value, nil
}

// optionalMember is the member, or nil when it is absent or JSON null; an error when given twice.
func optionalMember(object *jsonValue, key, path string) (*jsonValue, error) {
	value := object.members[key]
	if value == repeatedMember {
		return nil, listError(path + " appears more than once")
	}
	if value == nil || value.kind == jsonNull {
		return nil, nil
	}
	return value, nil
}

func requiredMember(object *jsonValue, key, path, expected string) (*jsonValue, error) {
	value, given := object.members[key]
	switch {
	case !given:
		return nil, listError(path + " is missing")
	case value == repeatedMember:
		return nil, listError(path + " appears more than once")
	case value.kind == jsonNull:
		return nil, listError(path + " is null, expected " + expected)
	}
	return value, nil
}

func stringMember(object *jsonValue, key, path string) (string, error) {
	value, err := requiredMember(object, key, path, "a string")
	if err != nil {
		return "", err
	}
	return asString(value, path)
}

func asString(value *jsonValue, path string) (string, error) {
	if value.kind != jsonString {
		return "", listError(path + " is not a string")
	}
	return value.text, nil
}

// optionalString is a member that may be absent or null, else a string given once (as the
// entries' key and signature, which this reader does not use but checks).
func optionalString(object *jsonValue, key, path string) error {
	value, err := optionalMember(object, key, path)
	if err == nil && value != nil {
		_, err = asString(value, path)
	}
	return err
}

func integerMember(object *jsonValue, key, path string) (int64, error) {
	value, err := requiredMember(object, key, path, "an integer")
	if err != nil {
		return 0, err
	}
	return asInteger(value, path)
}

// asInteger: a 64-bit integer written without fraction or exponent ("-0" is 0).
func asInteger(value *jsonValue, path string) (int64, error) {
	if value.kind == jsonNumber {
		if integer, err := strconv.ParseInt(value.text, 10, 64); err == nil {
			return integer, nil
		}
	}
	return 0, listError(path + " is not an integer")
}

func boolMember(object *jsonValue, key, path string) (bool, error) {
	value, err := requiredMember(object, key, path, "a boolean")
	if err != nil {
		return false, err
	}
	if value.kind != jsonBool {
		return false, listError(path + " is not a boolean")
	}
	return value.boolean, nil
}

func arrayMember(object *jsonValue, key, path string) ([]*jsonValue, error) {
	value, err := requiredMember(object, key, path, "an array")
	if err != nil {
		return nil, err
	}
	if value.kind != jsonArray {
		return nil, listError(path + " is not an array")
	}
	return value.items, nil
}
