package pinkeeper.reader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;

/**
 * Who may write a cache or fallback file: a file that users other than its owner and group may
 * write, or that sits in a directory they may write (and so replace it in) without the sticky bit,
 * is refused as {@code insecure-permissions}: a local user must not be able to plant pins. The
 * group counts as the service's own. Checked at every read, on the attributes of the file read.
 */
final class FilePermissions {
    private static final int OTHERS_WRITE = 0002;
    private static final int STICKY = 01000;

    private FilePermissions() {}

    /** Throws when {@code attributes} (of the file about to be read, or just read) let others write it. */
    static void checkFile(PosixFileAttributes attributes, String name) throws CacheReaderException {
        if (attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new CacheReaderException(CacheReaderException.Code.INSECURE_PERMISSIONS, name,
                    "may be written by any user (mode " + octal(attributes) + "): any local user could plant pins in it;"
                            + " make it writable by its owner only (chmod o-w)");
        }
    }

    /**
     * Throws when others may write {@code directory} and it has no sticky bit: they could put a
     * file of theirs in place of the one read. The sticky bit (as on /tmp) keeps them to their own files.
     */
    static void checkDirectory(Path directory, String name) throws CacheReaderException {
        int mode;
        try {
            mode = mode(directory);
        } catch (IOException | SecurityException e) {
            throw new CacheReaderException(CacheReaderException.Code.IO_ERROR, name, "cannot be checked: its directory " + directory
                    + " cannot be examined: " + e.getMessage());
        }
        if ((mode & OTHERS_WRITE) != 0 && (mode & STICKY) == 0) {
            throw new CacheReaderException(CacheReaderException.Code.INSECURE_PERMISSIONS, name, "is in the directory " + directory
                    + ", which any user may write (mode " + String.format("%04o", mode & 07777) + ", no sticky bit): any local user"
                    + " could put a file of theirs in its place; make the directory writable by its owner only (chmod o-w)");
        }
    }

    /**
     * The mode bits of {@code path} (links followed). The JDK's "unix" view is the only one that
     * has the sticky bit; where it is missing, the POSIX permissions stand in, without it (so an
     * others-writable directory is refused). A file system without POSIX permissions reports none.
     */
    private static int mode(Path path) throws IOException {
        try {
            return (Integer) Files.getAttribute(path, "unix:mode");
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            if (view == null) return 0;
            int mode = 0;
            for (PosixFilePermission permission : view.readAttributes().permissions()) mode |= 0400 >> permission.ordinal();
            return mode;
        }
    }

    private static String octal(PosixFileAttributes attributes) {
        int mode = 0;
        for (PosixFilePermission permission : attributes.permissions()) mode |= 0400 >> permission.ordinal();
        return String.format("%04o", mode);
    }
}
