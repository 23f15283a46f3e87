package pinkeeper.reader;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.io.ContentReference;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.POJONode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Reads a document as strict JSON (RFC 8259), as the Swift reader does, into a Jackson tree, so
 * that no two readers of one cache file can read it differently: UTF-8 only (Jackson alone would
 * skip a byte order mark, detect UTF-16 and pass some invalid UTF-8 through), no lone surrogate
 * escape, no NaN or Infinity, no trailing comma, nothing after the document, at most
 * {@value #MAXIMUM_DEPTH} levels. A member given twice in one object becomes {@link #REPEATED}:
 * {@link JsonFields} refuses it where a member is read, and an unknown one stays ignored.
 */
final class StrictJson {
    /** The deepest nesting accepted, the document's own object counting as 1. */
    static final int MAXIMUM_DEPTH = 512;

    /** Stands for a member given more than once (parsers disagree on which occurrence counts). */
    static final JsonNode REPEATED = new POJONode("a member given more than once");

    /** An integer literal too long for 64 bits: of no JSON type a field is read as. */
    private static final JsonNode OUT_OF_RANGE = new POJONode("an integer beyond 64 bits");

    /**
     * A number written with a fraction or an exponent: never an integer, whatever its value
     * ({@code 1.0}, {@code 1e3} and {@code -0.0} are refused where an integer is read), so its
     * value is never computed.
     */
    private static final JsonNode FRACTION = new POJONode("a number with a fraction or an exponent");

    /**
     * Jackson's defaults already refuse these; said here because the strictness depends on them.
     * Its length limits are lifted (the file's size is bounded by CacheReader): a valid document
     * is valid JSON whatever the length of a number or a string in a member no reader knows, as
     * in every other reader. Nesting is bounded here, at {@value #MAXIMUM_DEPTH} levels.
     */
    private static final JsonFactory FACTORY = new UnlimitedFactory(new JsonFactoryBuilder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNumberLength(Integer.MAX_VALUE).maxStringLength(Integer.MAX_VALUE).maxNestingDepth(Integer.MAX_VALUE).build())
            .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .disable(JsonReadFeature.ALLOW_TRAILING_COMMA)
            .disable(JsonReadFeature.ALLOW_MISSING_VALUES)
            .disable(JsonReadFeature.ALLOW_UNESCAPED_CONTROL_CHARS)
            .disable(JsonReadFeature.ALLOW_BACKSLASH_ESCAPING_ANY_CHARACTER)
            .disable(JsonReadFeature.ALLOW_LEADING_ZEROS_FOR_NUMBERS));

    /**
     * A factory whose parsers get its own read limits. Debian 12's Jackson 2.14 carries the 2.15
     * limits as a security backport, but its factory hands every parser the defaults (1,000 digits,
     * 20 million characters) whatever it was built with; 2.15 and later do what this does.
     * Without it a valid file with a 1,001-digit number in an unknown member was "not JSON" here alone.
     */
    private static final class UnlimitedFactory extends JsonFactory {
        private static final long serialVersionUID = 1L;

        UnlimitedFactory(JsonFactoryBuilder builder) {
            super(builder);
        }

        @Override
        protected IOContext _createContext(ContentReference content, boolean resourceManaged) {
            return new IOContext(streamReadConstraints(), _getBufferRecycler(), content == null ? ContentReference.unknown() : content,
                    resourceManaged);
        }
    }

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private StrictJson() {}

    static JsonNode read(byte[] data) throws PinListException {
        if (data.length >= 3 && (data[0] & 0xFF) == 0xEF && (data[1] & 0xFF) == 0xBB && (data[2] & 0xFF) == 0xBF) {
            throw notJson("not valid JSON (starts with a UTF-8 byte order mark)");
        }
        String text;
        try {
            // Java's UTF-8 decoder refuses overlong forms, encoded surrogates and beyond U+10FFFF.
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(data)).toString();
        } catch (CharacterCodingException e) {
            throw notJson("not valid JSON (invalid UTF-8)");
        }
        // Parsed from characters, so Jackson detects no encoding of its own.
        try (JsonParser parser = FACTORY.createParser(text)) {
            JsonNode root = document(parser);
            if (parser.nextToken() != null) throw notJson("not valid JSON (more data after the document)");
            return root;
        } catch (IOException e) {
            // Jackson's own message quotes the document: not repeated in a reason that is logged.
            throw notJson("not valid JSON");
        }
    }

    /** One value, without recursion: containers are attached to their parent when they open. */
    private static JsonNode document(JsonParser parser) throws IOException, PinListException {
        JsonToken token = parser.nextToken();
        if (token == null) throw notJson("not valid JSON (no document)");
        Deque<JsonNode> open = new ArrayDeque<>();
        JsonNode root = null;
        String name = null;
        do {
            JsonNode value;
            switch (token) {
                case FIELD_NAME -> {
                    name = checked(parser.currentName());
                    continue;
                }
                case END_OBJECT, END_ARRAY -> {
                    open.pop();
                    continue;
                }
                case START_OBJECT, START_ARRAY -> {
                    if (open.size() >= MAXIMUM_DEPTH) {
                        throw notJson("not valid JSON (nested deeper than " + MAXIMUM_DEPTH + " levels)");
                    }
                    value = token == JsonToken.START_OBJECT ? NODES.objectNode() : NODES.arrayNode();
                }
                case VALUE_STRING -> value = NODES.textNode(checked(parser.getText()));
                case VALUE_NUMBER_INT -> value = parser.getTextLength() > 20 ? OUT_OF_RANGE : NODES.numberNode(parser.getBigIntegerValue());
                case VALUE_NUMBER_FLOAT -> value = FRACTION;
                case VALUE_TRUE, VALUE_FALSE -> value = NODES.booleanNode(token == JsonToken.VALUE_TRUE);
                case VALUE_NULL -> value = NODES.nullNode();
                default -> throw notJson("not valid JSON (unexpected " + token + ")");
            }
            if (root == null) {
                root = value;
            } else if (open.peek() instanceof ObjectNode object) {
                JsonNode earlier = object.get(name);
                object.set(name, earlier == null ? value : REPEATED);
            } else {
                ((ArrayNode) open.peek()).add(value);
            }
            if (value.isContainerNode()) open.push(value);
        } while (!open.isEmpty() && (token = parser.nextToken()) != null);
        if (!open.isEmpty()) throw notJson("not valid JSON (unexpected end)");
        return root;
    }

    private static PinListException notJson(String reason) {
        return new PinListException(CacheReaderException.Code.NOT_JSON, reason);
    }

    /** The text of a string or member name; the bytes were valid UTF-8, so a lone surrogate came from an escape. */
    private static String checked(String text) throws PinListException {
        for (int index = 0; index < text.length(); index++) {
            char c = text.charAt(index);
            if (Character.isHighSurrogate(c) && index + 1 < text.length() && Character.isLowSurrogate(text.charAt(index + 1))) {
                index++;
            } else if (Character.isSurrogate(c)) {
                throw notJson("not valid JSON (a lone surrogate escape)");
            }
        }
        return text;
    }
}
