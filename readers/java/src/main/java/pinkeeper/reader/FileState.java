package pinkeeper.reader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

/**
 * What {@code stat} says about the cache file: enough to notice an atomic replacement (a new
 * inode, Java's {@code fileKey}), an edit in place (size, modification time in nanoseconds) or a
 * change of its permissions.
 * Missing and failed are states too, so that an unchanged failure is not retried on every question.
 */
record FileState(Kind kind, Object fileKey, long size, FileTime modified, Set<PosixFilePermission> permissions, String failure) {
    enum Kind { MISSING, FILE, FAILED }

    static final FileState MISSING = new FileState(Kind.MISSING, null, 0, null, null, null);

    static FileState of(Path path) {
        try {
            // The link itself, never its target: a symlink is refused when read (CacheReader.readFile).
            // With its permissions: a file made writable by others in place is looked at (and refused) again.
            BasicFileAttributes attributes;
            try {
                attributes = Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (UnsupportedOperationException e) {
                attributes = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            }
            Set<PosixFilePermission> permissions = attributes instanceof PosixFileAttributes posix ? posix.permissions() : null;
            return new FileState(Kind.FILE, attributes.fileKey(), attributes.size(), attributes.lastModifiedTime(), permissions, null);
        } catch (NoSuchFileException e) {
            return MISSING;
        } catch (IOException | SecurityException e) {
            return new FileState(Kind.FAILED, null, 0, null, null, String.valueOf(e.getMessage()));
        }
    }
}
