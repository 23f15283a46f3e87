package pinkeeper.reader;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Strict, typed access to a Jackson tree: a field of the wrong JSON type is an error naming its
 * path (e.g. {@code fingerprints[2].expires is not an integer}), never a silent conversion.
 */
final class JsonFields {
    private JsonFields() {}

    /** The document's root object, read as strict JSON ({@link StrictJson}). */
    static JsonNode parseObject(byte[] data) throws PinListException {
        JsonNode root = StrictJson.read(data);
        if (!root.isObject()) throw new PinListException("the document is not an object");
        return root;
    }

    /** The member, or null when it is absent or JSON {@code null}; an error when it is given twice. */
    static JsonNode optional(JsonNode parent, String key, String path) throws PinListException {
        JsonNode value = parent.get(key);
        if (value == StrictJson.REPEATED) throw new PinListException(path + " appears more than once");
        return value == null || value.isNull() ? null : value;
    }

    static JsonNode required(JsonNode parent, String key, String path, String expected) throws PinListException {
        JsonNode value = parent.get(key);
        if (value == null) throw new PinListException(path + " is missing");
        if (value == StrictJson.REPEATED) throw new PinListException(path + " appears more than once");
        if (value.isNull()) throw new PinListException(path + " is null, expected " + expected);
        return value;
    }

    static String string(JsonNode parent, String key, String path) throws PinListException {
        return asString(required(parent, key, path, "a string"), path);
    }

    static String asString(JsonNode value, String path) throws PinListException {
        if (!value.isTextual()) throw new PinListException(path + " is not a string");
        return value.textValue();
    }

    /** A member that is absent, null or a string; its text or null. */
    static String optionalString(JsonNode parent, String key, String path) throws PinListException {
        JsonNode value = optional(parent, key, path);
        return value == null ? null : asString(value, path);
    }

    static long integer(JsonNode parent, String key, String path) throws PinListException {
        return asInteger(required(parent, key, path, "an integer"), path);
    }

    /** A 64-bit integer written without fraction or exponent. */
    static long asInteger(JsonNode value, String path) throws PinListException {
        if (!value.isIntegralNumber() || !value.canConvertToLong()) throw new PinListException(path + " is not an integer");
        return value.longValue();
    }

    static boolean bool(JsonNode parent, String key, String path) throws PinListException {
        JsonNode value = required(parent, key, path, "a boolean");
        if (!value.isBoolean()) throw new PinListException(path + " is not a boolean");
        return value.booleanValue();
    }

    static JsonNode array(JsonNode parent, String key, String path) throws PinListException {
        JsonNode value = required(parent, key, path, "an array");
        if (!value.isArray()) throw new PinListException(path + " is not an array");
        return value;
    }

    static JsonNode object(JsonNode value, String path) throws PinListException {
        if (!value.isObject()) throw new PinListException(path + " is not an object");
        return value;
    }
}
