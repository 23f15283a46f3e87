package pinkeeper.reader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * What {@code stat} says about the cache file: enough to notice an atomic replacement (a new
 * inode, Java's {@code fileKey}) or an edit in place (size, modification time in nanoseconds).
 * Missing and failed are states too, so that an unchanged failure is not retried on every question.
 */
record FileState(Kind kind, Object fileKey, long size, FileTime modified, String failure) {
    enum Kind { MISSING, FILE, FAILED }

    static final FileState MISSING = new FileState(Kind.MISSING, null, 0, null, null);

    static FileState of(Path path) {
        try {
            // The link itself, never its target: a symlink is refused when read (CacheReader.readFile).
            BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return new FileState(Kind.FILE, attributes.fileKey(), attributes.size(), attributes.lastModifiedTime(), null);
        } catch (NoSuchFileException e) {
            return MISSING;
        } catch (IOException | SecurityException e) {
            return new FileState(Kind.FAILED, null, 0, null, String.valueOf(e.getMessage()));
        }
    }
}
