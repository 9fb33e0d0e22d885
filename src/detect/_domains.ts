/**
 * External domains: the host and scheme of URLs given to curl and wget, to
 * web-fetch tools and to MCP tools. Parsing uses the WHATWG `URL` class, so
 * hosts come out normalized (lower case, IDNA, IPv4 in dotted form).
 *
 * @module
 */

/** A host reached over some scheme. */
export interface DomainFinding {
  domain: string;
  scheme: string;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** A scheme-less host with an optional port and path: `example.com/x`, `10.0.0.1:8080`. */
const BARE_HOST =
  /^(?:(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}\.?|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])(?::\d{1,5})?(?:[/?#]\S*)?$/i;
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;
const IPV6 = /^[0-9a-f:.]+$/;
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const LOOPBACK_V6 = /^(?:::1|::|::ffff:(?:127\.[\d.]+|7f[0-9a-f]{2}:[0-9a-f]{1,4}))$/;

/** True for hosts that are this machine: localhost, 127.0.0.0/8, ::1, 0.0.0.0. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || host === "0.0.0.0" ||
    LOOPBACK_V4.test(host) || LOOPBACK_V6.test(host);
}

/**
 * The external domain a URL reaches, or undefined when it is not a URL with
 * a usable host, or reaches this machine. A scheme-less host is read with
 * `defaultScheme` when one is given. Never throws.
 */
export function domainOf(text: string, defaultScheme?: string): DomainFinding | undefined {
  const value = text.trim();
  if (value === "" || value.length > 4096) return undefined;
  let href: string;
  if (SCHEME.test(value)) href = value;
  else if (defaultScheme !== undefined && BARE_HOST.test(value)) {
    href = `${defaultScheme}://${value}`;
  } else return undefined;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  let host = url.hostname.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) {
    host = host.slice(1, -1);
    if (!IPV6.test(host)) return undefined;
  } else {
    if (host.endsWith(".")) host = host.slice(0, -1);
    if (!HOST_NAME.test(host)) return undefined;
  }
  if (host === "" || isLoopback(host)) return undefined;
  return { domain: host, scheme: url.protocol.slice(0, -1).toLowerCase() };
}

const CURL_VALUE_SHORT = new Set("AbcCdDeEFHKmoPQrtTuUwxXYyz");
const CURL_VALUE_LONG = new Set(
  `abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers config connect-timeout
  connect-to continue-at cookie cookie-jar create-file-mode crlfile curves data data-ascii data-binary
  data-raw data-urlencode delegation dns-interface dns-ipv4-addr dns-ipv6-addr dns-servers doh-url
  dump-header ech egd-file engine etag-compare etag-save expect100-timeout form form-string ftp-account
  ftp-alternative-to-user ftp-method ftp-port ftp-ssl-ccc-mode happy-eyeballs-timeout-ms haproxy-clientip
  header help hostpubmd5 hostpubsha256 hsts interface ip-tos ipfs-gateway json keepalive-cnt
  keepalive-time key key-type krb libcurl limit-rate local-port login-options mail-auth mail-from
  mail-rcpt max-filesize max-redirs max-time netrc-file noproxy oauth2-bearer output output-dir
  parallel-max pass pinnedpubkey preproxy proto proto-default proto-redir proxy proxy-cacert
  proxy-capath proxy-cert proxy-cert-type proxy-ciphers proxy-crlfile proxy-header proxy-key
  proxy-key-type proxy-pass proxy-pinnedpubkey proxy-service-name proxy-tls13-ciphers
  proxy-tlsauthtype proxy-tlspassword proxy-tlsuser proxy-user proxy1.0 pubkey quote random-file range
  rate referer request request-target resolve retry retry-delay retry-max-time sasl-authzid
  service-name socks4 socks4a socks5 socks5-gssapi-service socks5-hostname speed-limit speed-time
  stderr telnet-option tftp-blksize time-cond tls-max tls13-ciphers tlsauthtype tlspassword tlsuser
  trace trace-ascii trace-config unix-socket upload-file url-query user user-agent variable
  write-out`.split(/\s+/).map((name) => `--${name}`),
);
const WGET_VALUE_SHORT = new Set("OoaPUetTwiBQlARDXI");
const WGET_VALUE_LONG = new Set(
  `output-document output-file append-output directory-prefix user-agent execute tries timeout wait
  input-file base quota level accept reject domains exclude-domains include-directories
  exclude-directories header user password http-user http-password ftp-user ftp-password proxy-user
  proxy-password post-data post-file body-data body-file method load-cookies save-cookies referer
  ca-certificate ca-directory certificate certificate-type private-key private-key-type limit-rate
  bind-address dns-timeout connect-timeout read-timeout waitretry restrict-file-names default-page
  config progress secure-protocol accept-regex reject-regex regex-type cut-dirs local-encoding
  remote-encoding report-speed rejected-log max-redirect`.split(/\s+/).map((name) => `--${name}`),
);

/** The URL operands of a curl or wget command (`words[0]` is the program). */
export function fetchCommandUrls(program: "curl" | "wget", words: string[]): string[] {
  const valueShort = program === "curl" ? CURL_VALUE_SHORT : WGET_VALUE_SHORT;
  const valueLong = program === "curl" ? CURL_VALUE_LONG : WGET_VALUE_LONG;
  const urls: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (word === "--") {
      urls.push(...words.slice(i + 1));
      break;
    }
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const name = equals < 0 ? word : word.slice(0, equals);
      if (name === "--url") {
        if (equals >= 0) urls.push(word.slice(equals + 1));
        else if (i + 1 < words.length) urls.push(words[++i]!);
      } else if (equals < 0 && valueLong.has(name)) i++;
      continue;
    }
    if (word.startsWith("-") && word.length > 1) {
      for (let j = 1; j < word.length; j++) {
        if (valueShort.has(word[j]!)) {
          if (j === word.length - 1) i++;
          break;
        }
      }
      continue;
    }
    urls.push(word);
  }
  return urls;
}

/** `http(s)://` URLs written inside free text, such as a web-fetch prompt. */
export function urlsInText(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/\bhttps?:\/\/[^\s"'<>()[\]{}`]+/gi)) {
    out.push(match[0].replace(/[.,;:!?]+$/, ""));
  }
  return out;
}

/** Schemes that count when an MCP tool's argument is a URL. */
export const MCP_URL_SCHEMES = new Set(["http", "https", "ws", "wss", "ftp", "ftps"]);
