import java.net.*;
import java.io.*;
public class Get {
    public static void main(String[] a) throws Exception {
        URL u = new URL(a[0]);
        String ph = System.getenv("HTTPS_PROXY");
        HttpURLConnection c;
        if (ph != null) {
            URI p = URI.create(ph);
            c = (HttpURLConnection) u.openConnection(new Proxy(Proxy.Type.HTTP, new InetSocketAddress(p.getHost(), p.getPort())));
        } else c = (HttpURLConnection) u.openConnection();
        try (InputStream in = c.getInputStream()) { System.out.print(new String(in.readAllBytes())); }
        System.out.println();
    }
}
