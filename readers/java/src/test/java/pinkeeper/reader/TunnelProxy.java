package pinkeeper.reader;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An HTTP proxy on loopback that answers every {@code CONNECT host:port} with a tunnel to
 * 127.0.0.1:port. Through it a client connects to a URL such as {@code https://api.example.com:PORT/}
 * with no name lookup, yet verifies the certificate for (and sends SNI) api.example.com: JDK 17
 * has no resolver hook for HttpClient or HttpsURLConnection.
 */
final class TunnelProxy implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    /** The authorities the clients asked for, in order. */
    final List<String> requested = new CopyOnWriteArrayList<>();

    TunnelProxy() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        start(this::acceptLoop);
    }

    Proxy proxy() {
        return new Proxy(Proxy.Type.HTTP, address());
    }

    InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                sockets.add(client);
                start(() -> tunnel(client));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void tunnel(Socket client) {
        try {
            String head = readHead(client.getInputStream());
            String[] words = head.split(" ", 3);
            if (words.length < 3 || !words[0].equals("CONNECT")) throw new IOException("not a CONNECT request: " + head);
            requested.add(words[1]);
            int port = Integer.parseInt(words[1].substring(words[1].lastIndexOf(':') + 1));
            Socket upstream = new Socket(InetAddress.getLoopbackAddress(), port);
            sockets.add(upstream);
            client.getOutputStream().write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            start(() -> pipe(upstream, client));
            pipe(client, upstream);
        } catch (IOException | RuntimeException e) {
            closeQuietly(client);
        }
    }

    /** The request line; the rest of the head up to the empty line is read and dropped. */
    private static String readHead(InputStream input) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int next = input.read();
            if (next < 0 || head.size() > 8192) throw new IOException("no complete request head");
            head.write(next);
            matched = next == "\r\n\r\n".charAt(matched) ? matched + 1 : (next == '\r' ? 1 : 0);
        }
        String text = head.toString(StandardCharsets.US_ASCII);
        return text.substring(0, text.indexOf("\r\n"));
    }

    private static void pipe(Socket from, Socket to) {
        try (InputStream input = from.getInputStream(); OutputStream output = to.getOutputStream()) {
            input.transferTo(output);
        } catch (IOException e) {
            // One side closed: so does the other.
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void start(Runnable task) {
        Thread thread = new Thread(task, "tunnel-proxy");
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : sockets) closeQuietly(socket);
    }
}
