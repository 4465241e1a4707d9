/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS for the egress proxy.
 *
 * Two parts with different trust. tls_parse_sni reads bytes the agent
 * controls; it needs nothing but the buffer (no allocation, no OpenSSL,
 * no global state). The session CA holds the only signing key of the
 * session; everything that touches that key is in this file.
 */
#include "net/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "util/cleanup.h"

/* ------------------------------------------------------------------ */
/* Host names                                                          */
/* ------------------------------------------------------------------ */

#define DNS_NAME_MAX 255
#define DNS_LABEL_MAX 63

static bool is_name_char(uint8_t c)
{
	/* ASCII only, independent of the locale. '_' is not LDH, but it
	 * occurs in real host names (SRV-style and some CDN names) and is
	 * as harmless as '-' to every consumer of the name. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/*
 * Validate a DNS host name of len bytes (1..255; letters, digits, '-',
 * '_' and dots; no empty label, none longer than 63) and write it
 * lower-cased, without one trailing dot, NUL-terminated, to out.
 * Returns 0, -EINVAL for an invalid name (whatever out_len is), -ENOSPC
 * when the name does not fit in out_len.
 *
 * WARNING: policy matching compares these names as strings. Letting
 * through an empty label, a NUL or a second trailing dot would let
 * "evil..example.com" or "example.com\0.evil" reach a suffix match that
 * the resolver reads differently.
 */
static int dns_name_normalize(const uint8_t *name, size_t len, char *out, size_t out_len)
{
	size_t label = 0;

	if (len == 0 || len > DNS_NAME_MAX)
		return -EINVAL;
	if (name[len - 1] == '.')
		len--;
	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (name[i] == '.') {
			if (label == 0)
				return -EINVAL;
			label = 0;
			continue;
		}
		if (!is_name_char(name[i]) || ++label > DNS_LABEL_MAX)
			return -EINVAL;
	}
	if (label == 0)
		return -EINVAL;
	if (len >= out_len)
		return -ENOSPC;
	for (size_t i = 0; i < len; i++)
		out[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + ('a' - 'A') : name[i]);
	out[len] = '\0';
	return 0;
}

/* A host as certificates name it: a normalised DNS name, or an IP
 * address (binary, and canonical text in name). */
struct tls_host {
	char name[DNS_NAME_MAX + 1];
	bool ip;
	unsigned char addr[16];
	size_t addr_len;
};

/*
 * Parse host: a dotted-quad IPv4 address, an IPv6 address (bare or in
 * brackets), or a DNS name. Only the strict inet_pton forms count as
 * addresses; "127.1" or "0x7f.0.0.1" are names here, so a caller must
 * pass addresses in canonical form.
 */
static int tls_host_parse(const char *host, struct tls_host *h)
{
	char tmp[INET6_ADDRSTRLEN + 2];
	size_t len = strnlen(host, DNS_NAME_MAX + 1);
	const char *lit = host;

	memset(h, 0, sizeof(*h));
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		if (len - 2 >= sizeof(tmp))
			return -EINVAL;
		memcpy(tmp, host + 1, len - 2);
		tmp[len - 2] = '\0';
		lit = tmp;
		if (inet_pton(AF_INET6, lit, h->addr) != 1)
			return -EINVAL;
		h->addr_len = 16;
	} else if (inet_pton(AF_INET, lit, h->addr) == 1) {
		h->addr_len = 4;
	} else if (inet_pton(AF_INET6, lit, h->addr) == 1) {
		h->addr_len = 16;
	}
	if (h->addr_len) {
		h->ip = true;
		if (!inet_ntop(h->addr_len == 4 ? AF_INET : AF_INET6, h->addr, h->name,
			       sizeof(h->name)))
			return -EINVAL;
		return 0;
	}
	return dns_name_normalize((const uint8_t *)host, len, h->name, sizeof(h->name));
}

/* Untrusted text shortened and made printable for an error message;
 * out_len >= 4. */
static const char *printable(const char *s, char *out, size_t out_len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < out_len; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	out[i] = '\0';
	if (s[i])
		memcpy(out + i - 3, "...", 3);
	return out;
}

/* ------------------------------------------------------------------ */
/* SNI                                                                 */
/* ------------------------------------------------------------------ */

#define TLS_CT_HANDSHAKE 22
#define TLS_HS_CLIENT_HELLO 1
#define TLS_EXT_SERVER_NAME 0
#define TLS_SNI_HOST_NAME 0
/* RFC 8446 5.1: a record carries at most 2^14 bytes of plaintext. */
#define TLS_RECORD_MAX 16384
/* The whole ClientHello message, its 4-byte header included. Real ones
 * are far smaller (about 1.8 KiB with a post-quantum key share). */
#define TLS_HELLO_MAX 16384

/* A bounded reader: every accessor checks the bytes are there. */
struct rd {
	const uint8_t *p;
	size_t n;
};

static bool rd_u8(struct rd *r, unsigned *v)
{
	if (r->n < 1)
		return false;
	*v = r->p[0];
	r->p++;
	r->n--;
	return true;
}

static bool rd_u16(struct rd *r, unsigned *v)
{
	if (r->n < 2)
		return false;
	*v = (unsigned)r->p[0] << 8 | r->p[1];
	r->p += 2;
	r->n -= 2;
	return true;
}

static bool rd_bytes(struct rd *r, size_t n, struct rd *sub)
{
	if (r->n < n)
		return false;
	sub->p = r->p;
	sub->n = n;
	r->p += n;
	r->n -= n;
	return true;
}

static bool rd_vec8(struct rd *r, struct rd *sub)
{
	unsigned n;

	return rd_u8(r, &n) && rd_bytes(r, n, sub);
}

static bool rd_vec16(struct rd *r, struct rd *sub)
{
	unsigned n;

	return rd_u16(r, &n) && rd_bytes(r, n, sub);
}

/* The body of a server_name extension (RFC 6066 3). Returns 1 (name
 * written), -ENOENT (no host_name entry), -ENOSPC or -EINVAL. */
static int parse_server_name(struct rd *ext, char *sni, size_t sni_len)
{
	struct rd list, name;
	unsigned type;
	int found = -ENOENT;

	/* server_name_list<1..2^16-1>, and nothing after it. An empty
	 * extension is what a server echoes, never what a client sends. */
	if (!rd_vec16(ext, &list) || ext->n != 0 || list.n == 0)
		return -EINVAL;
	while (list.n) {
		if (!rd_u8(&list, &type) || !rd_vec16(&list, &name))
			return -EINVAL;
		if (type != TLS_SNI_HOST_NAME)
			continue;
		/* RFC 6066 3: at most one name of each type. Two host names
		 * are how one would ask the policy about one host and the
		 * upstream about another. */
		if (found != -ENOENT)
			return -EINVAL;
		found = dns_name_normalize(name.p, name.n, sni, sni_len);
		if (found == -EINVAL)
			return found;
		if (found == 0)
			found = 1;
	}
	return found;
}

/* A ClientHello body (after the handshake header). The whole message is
 * checked before a result is given, so a name never comes out of bytes
 * that are not a well-formed ClientHello. */
static int parse_client_hello(const uint8_t *msg, size_t len, char *sni, size_t sni_len)
{
	struct rd r = { msg, len }, v, exts;
	unsigned version;
	bool seen = false;
	int found = -ENOENT;

	if (!rd_u16(&r, &version) || version < 0x0301 || version > 0x0303)
		return -EINVAL;
	if (!rd_bytes(&r, 32, &v))                               /* random */
		return -EINVAL;
	if (!rd_vec8(&r, &v) || v.n > 32)                        /* legacy_session_id */
		return -EINVAL;
	if (!rd_vec16(&r, &v) || v.n < 2 || v.n % 2 != 0)        /* cipher_suites */
		return -EINVAL;
	if (!rd_vec8(&r, &v) || v.n < 1)                         /* compression_methods */
		return -EINVAL;
	/* Before TLS 1.3 the extensions block may be absent altogether. */
	if (r.n == 0)
		return -ENOENT;
	if (!rd_vec16(&r, &exts) || r.n != 0)
		return -EINVAL;
	while (exts.n) {
		unsigned type;
		struct rd data;

		if (!rd_u16(&exts, &type) || !rd_vec16(&exts, &data))
			return -EINVAL;
		if (type != TLS_EXT_SERVER_NAME)
			continue;
		/* RFC 8446 4.2: no extension type twice. A parser that took
		 * the first and a server that took the last would disagree. */
		if (seen)
			return -EINVAL;
		seen = true;
		found = parse_server_name(&data, sni, sni_len);
		if (found == -EINVAL)
			return found;
	}
	return found;
}

static int sni_result(int r, char *sni, size_t sni_len)
{
	if (r != 1 && sni_len > 0)
		sni[0] = '\0';
	return r;
}

/*
 * The stream is handshake records (type 22, version 3.1..3.4, 1..2^14
 * bytes each; RFC 8446 5.1 forbids empty handshake fragments) whose
 * payloads concatenate to exactly one ClientHello. The record that ends
 * the ClientHello must end with it: nothing may follow the ClientHello
 * before the server answers. Bytes after that record are not looked at.
 *
 * Every record header is checked as soon as its bytes are in, so a
 * stream that is not TLS is refused from its first byte; the ClientHello
 * itself is parsed once it is complete, so a truncated one is always
 * "need more" (0) and never a name.
 */
int tls_parse_sni(const uint8_t *buf, size_t len, char *sni, size_t sni_len)
{
	uint8_t msg[TLS_HELLO_MAX];
	size_t have = 0; /* bytes of the message collected in msg */
	size_t want = 0; /* its size once its header is in, else 0 */
	size_t off = 0;

	if (!sni)
		sni_len = 0;
	sni_result(0, sni, sni_len);
	if (!buf)
		return len ? -EINVAL : 0;

	for (;;) {
		size_t avail = len - off, rlen, got, i = 0;
		const uint8_t *rec;

		if (avail >= 1 && buf[off] != TLS_CT_HANDSHAKE)
			return -EINVAL;
		if (avail >= 2 && buf[off + 1] != 3)
			return -EINVAL;
		if (avail >= 3 && (buf[off + 2] < 1 || buf[off + 2] > 4))
			return -EINVAL;
		if (avail < 5)
			return 0;
		rlen = (size_t)buf[off + 3] << 8 | buf[off + 4];
		if (rlen == 0 || rlen > TLS_RECORD_MAX)
			return -EINVAL;
		rec = buf + off + 5;
		got = rlen < avail - 5 ? rlen : avail - 5;

		for (; i < got && have < 4; i++)
			msg[have++] = rec[i];
		if (have >= 1 && msg[0] != TLS_HS_CLIENT_HELLO)
			return -EINVAL;
		if (have == 4 && want == 0) {
			size_t body = (size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3];

			if (body > TLS_HELLO_MAX - 4)
				return -EINVAL;
			want = 4 + body;
		}
		if (want) {
			/* WARNING: this bound is what keeps the memcpy below
			 * inside msg. */
			if (rlen - i > want - have)
				return -EINVAL;
			memcpy(msg + have, rec + i, got - i);
			have += got - i;
		}
		if (got < rlen)
			return 0;
		off += 5 + rlen;
		if (want && have == want)
			return sni_result(parse_client_hello(msg + 4, want - 4, sni, sni_len), sni,
					  sni_len);
	}
}

/* ------------------------------------------------------------------ */
/* OpenSSL helpers                                                     */
/* ------------------------------------------------------------------ */

#define DEFINE_OSSL_FREEP(type, fn)                 \
	static inline void fn##p(type **p)          \
	{                                           \
		fn(*p);                             \
	}
DEFINE_OSSL_FREEP(X509, X509_free)
DEFINE_OSSL_FREEP(BIO, BIO_free)
DEFINE_OSSL_FREEP(BIGNUM, BN_free)
DEFINE_OSSL_FREEP(SSL_CTX, SSL_CTX_free)
DEFINE_OSSL_FREEP(X509_EXTENSION, X509_EXTENSION_free)
DEFINE_OSSL_FREEP(GENERAL_NAMES, GENERAL_NAMES_free)
DEFINE_OSSL_FREEP(GENERAL_NAME, GENERAL_NAME_free)

static void x509_info_stack_free(STACK_OF(X509_INFO) **p)
{
	if (*p)
		sk_X509_INFO_pop_free(*p, X509_INFO_free);
}

/* error_set with OpenSSL's reason for the earliest queued error appended;
 * clears OpenSSL's error queue. */
static int ssl_error(struct error *err, int code, const char *fmt, ...) PRINTF_LIKE(3, 4);
static int ssl_error(struct error *err, int code, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX / 2];
	unsigned long e = ERR_peek_error();
	const char *why = e ? ERR_reason_error_string(e) : NULL;
	char code_buf[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (e && !why) {
		snprintf(code_buf, sizeof(code_buf), "OpenSSL error %#lx", e);
		why = code_buf;
	}
	ERR_clear_error();
	if (why)
		return error_set(err, code, "%s: %s", msg, why);
	return error_set(err, code, "%s", msg);
}

static EVP_PKEY *ec_key_new(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* A random, positive, non-zero 128-bit serial (RFC 5280 4.1.2.2: at most
 * 20 octets; CA/B Forum: at least 64 bits of randomness). */
static bool set_random_serial(X509 *x)
{
	_cleanup_(BN_freep) BIGNUM *bn = BN_new();
	unsigned char b[16];

	if (!bn)
		return false;
	do {
		if (RAND_bytes(b, sizeof(b)) != 1 || !BN_bin2bn(b, sizeof(b), bn))
			return false;
	} while (BN_is_zero(bn));
	return BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
}

static bool add_ext(X509 *x, X509V3_CTX *v3, int nid, const char *value)
{
	_cleanup_(X509_EXTENSION_freep) X509_EXTENSION *ext =
		X509V3_EXT_nconf_nid(NULL, v3, nid, value);

	return ext && X509_add_ext(x, ext, -1) == 1;
}

/* ------------------------------------------------------------------ */
/* The session CA                                                      */
/* ------------------------------------------------------------------ */

/* WARNING: the table has TLS_CACHE_BUCKETS buckets (a power of two) for
 * at most TLS_CACHE_MAX hosts. */
#define TLS_CACHE_MAX 1024
#define TLS_CACHE_BUCKETS 2048
#define TLS_CA_BACKDATE (60 * 60)
#define TLS_CA_LIFETIME (24 * 60 * 60)
/* RFC 5280 ub-common-name */
#define TLS_CN_MAX 64

enum { LEAF_EXT_BASIC, LEAF_EXT_KEY_USAGE, LEAF_EXT_EKU, LEAF_EXT_AKID, LEAF_EXT_COUNT };

struct tls_leaf {
	struct tls_leaf *chain;         /* next in the same bucket */
	struct tls_leaf *newer, *older; /* LRU list */
	SSL_CTX *ctx;                   /* owned */
	uint32_t hash;
	char host[];                    /* normalised, as tls_host_parse gives it */
};

struct tls_ca {
	EVP_PKEY *key; /* signs the leaves */
	X509 *cert;
	char *pem;
	/*
	 * One key for every leaf of the session. Generating a P-256 key
	 * per host would cost a key generation on each mint and buy no
	 * isolation: all leaf keys would sit in this process next to the
	 * CA key, which can sign anything anyway. What it gives up is
	 * that a client could tell two hosts share a key; the leaves
	 * already share an issuer that exists only for this session.
	 */
	EVP_PKEY *leaf_key;
	/* The extensions every leaf carries, encoded once. */
	X509_EXTENSION *leaf_ext[LEAF_EXT_COUNT];
	struct tls_leaf *bucket[TLS_CACHE_BUCKETS];
	struct tls_leaf *newest, *oldest;
	size_t count;
};

static inline void tls_ca_freep(struct tls_ca **p)
{
	tls_ca_free(*p);
}

static bool ca_cert_build(struct tls_ca *ca)
{
	_cleanup_(X509_freep) X509 *x = X509_new();
	unsigned char rnd[8];
	char cn[64];
	X509_NAME *name;
	X509V3_CTX v3;
	int n;

	if (!x || X509_set_version(x, X509_VERSION_3) != 1 || !set_random_serial(x))
		return false;
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return false;
	n = snprintf(cn, sizeof(cn), "airlock session CA ");
	for (size_t i = 0; i < sizeof(rnd); i++)
		n += snprintf(cn + n, sizeof(cn) - (size_t)n, "%02x", rnd[i]);
	name = X509_get_subject_name(x);
	if (!name ||
	    X509_NAME_add_entry_by_NID(name, NID_commonName, MBSTRING_ASC, (const unsigned char *)cn,
				       -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, name) != 1)
		return false;
	if (!X509_gmtime_adj(X509_getm_notBefore(x), -TLS_CA_BACKDATE) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), TLS_CA_LIFETIME))
		return false;
	if (X509_set_pubkey(x, ca->key) != 1)
		return false;
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	if (!add_ext(x, &v3, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(x, &v3, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(x, &v3, NID_subject_key_identifier, "hash"))
		return false;
	if (X509_sign(x, ca->key, EVP_sha256()) <= 0)
		return false;
	ca->cert = steal_pointer(&x);
	return true;
}

static bool ca_pem_build(struct tls_ca *ca)
{
	_cleanup_(BIO_freep) BIO *bio = BIO_new(BIO_s_mem());
	char *data;
	long n;

	if (!bio || PEM_write_bio_X509(bio, ca->cert) != 1)
		return false;
	n = BIO_get_mem_data(bio, &data);
	if (n <= 0)
		return false;
	ca->pem = strndup(data, (size_t)n);
	return ca->pem != NULL;
}

static bool leaf_ext_build(struct tls_ca *ca)
{
	static const struct {
		int nid;
		const char *value;
	} spec[LEAF_EXT_COUNT] = {
		[LEAF_EXT_BASIC] = { NID_basic_constraints, "critical,CA:FALSE" },
		[LEAF_EXT_KEY_USAGE] = { NID_key_usage, "critical,digitalSignature" },
		[LEAF_EXT_EKU] = { NID_ext_key_usage, "serverAuth" },
		[LEAF_EXT_AKID] = { NID_authority_key_identifier, "keyid:always" },
	};
	X509V3_CTX v3;

	X509V3_set_ctx(&v3, ca->cert, NULL, NULL, NULL, 0);
	for (size_t i = 0; i < LEAF_EXT_COUNT; i++) {
		ca->leaf_ext[i] = X509V3_EXT_nconf_nid(NULL, &v3, spec[i].nid, spec[i].value);
		if (!ca->leaf_ext[i])
			return false;
	}
	return true;
}

int tls_ca_new(struct tls_ca **out, struct error *err)
{
	_cleanup_(tls_ca_freep) struct tls_ca *ca = calloc(1, sizeof(*ca));

	*out = NULL;
	if (!ca)
		return error_set(err, ENOMEM, "session CA: out of memory");
	ca->key = ec_key_new();
	ca->leaf_key = ec_key_new();
	if (!ca->key || !ca->leaf_key)
		return ssl_error(err, ENOMEM, "session CA: cannot generate a P-256 key");
	if (!ca_cert_build(ca))
		return ssl_error(err, ENOMEM, "session CA: cannot build its certificate");
	if (!ca_pem_build(ca))
		return ssl_error(err, ENOMEM, "session CA: cannot encode its certificate");
	if (!leaf_ext_build(ca))
		return ssl_error(err, ENOMEM, "session CA: cannot encode leaf extensions");
	*out = steal_pointer(&ca);
	return 0;
}

void tls_ca_free(struct tls_ca *ca)
{
	struct tls_leaf *l, *next;

	if (!ca)
		return;
	for (l = ca->newest; l; l = next) {
		next = l->older;
		SSL_CTX_free(l->ctx);
		free(l);
	}
	for (size_t i = 0; i < LEAF_EXT_COUNT; i++)
		X509_EXTENSION_free(ca->leaf_ext[i]);
	free(ca->pem);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->leaf_key);
	EVP_PKEY_free(ca->key);
	free(ca);
}

const char *tls_ca_cert_pem(const struct tls_ca *ca)
{
	return ca->pem;
}

static bool leaf_add_san(X509 *x, const struct tls_host *h)
{
	_cleanup_(GENERAL_NAMES_freep) GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	_cleanup_(GENERAL_NAME_freep) GENERAL_NAME *gen = GENERAL_NAME_new();
	ASN1_STRING *s;

	if (!gens || !gen)
		return false;
	if (h->ip) {
		s = ASN1_OCTET_STRING_new();
		if (!s || ASN1_OCTET_STRING_set(s, h->addr, (int)h->addr_len) != 1) {
			ASN1_OCTET_STRING_free(s);
			return false;
		}
		GENERAL_NAME_set0_value(gen, GEN_IPADD, s);
	} else {
		s = ASN1_IA5STRING_new();
		if (!s || ASN1_STRING_set(s, h->name, -1) != 1) {
			ASN1_IA5STRING_free(s);
			return false;
		}
		GENERAL_NAME_set0_value(gen, GEN_DNS, s);
	}
	if (!sk_GENERAL_NAME_push(gens, gen))
		return false;
	gen = NULL; /* owned by gens */
	return X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1;
}

static X509 *leaf_cert_new(const struct tls_ca *ca, const struct tls_host *h)
{
	_cleanup_(X509_freep) X509 *x = X509_new();
	size_t cn_len = strlen(h->name);
	X509_NAME *name;

	if (!x || X509_set_version(x, X509_VERSION_3) != 1 || !set_random_serial(x))
		return NULL;
	/* The CN is only for display (RFC 6125 6.4.4: clients match the
	 * SAN when there is one) and is bounded at 64; the SAN carries the
	 * full name. */
	if (cn_len > TLS_CN_MAX)
		cn_len = TLS_CN_MAX;
	name = X509_get_subject_name(x);
	if (!name ||
	    X509_NAME_add_entry_by_NID(name, NID_commonName, MBSTRING_ASC,
				       (const unsigned char *)h->name, (int)cn_len, -1, 0) != 1)
		return NULL;
	if (X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1 ||
	    X509_set1_notBefore(x, X509_get0_notBefore(ca->cert)) != 1 ||
	    X509_set1_notAfter(x, X509_get0_notAfter(ca->cert)) != 1 ||
	    X509_set_pubkey(x, ca->leaf_key) != 1)
		return NULL;
	if (!leaf_add_san(x, h))
		return NULL;
	for (size_t i = 0; i < LEAF_EXT_COUNT; i++)
		if (X509_add_ext(x, ca->leaf_ext[i], -1) != 1)
			return NULL;
	if (X509_sign(x, ca->key, EVP_sha256()) <= 0)
		return NULL;
	return steal_pointer(&x);
}

/*
 * Pick "http/1.1" from the client's ALPN list, or nothing. The proxy
 * speaks HTTP/1.1 to the agent; offering h2 only is answered with no
 * ALPN at all (SSL_TLSEXT_ERR_NOACK), not with an alert, so the client
 * goes on with HTTP/1.1 by default (RFC 7301 3.2 lets a server ignore
 * ALPN; every h2-only client we know then speaks HTTP/1.1 or fails
 * cleanly).
 */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char http11[] = { 'h', 't', 't', 'p', '/', '1', '.', '1' };
	size_t i = 0;

	(void)ssl;
	(void)arg;
	while (i < inlen) {
		size_t n = in[i];

		if (n == 0 || n > inlen - i - 1)
			return SSL_TLSEXT_ERR_NOACK;
		if (n == sizeof(http11) && memcmp(in + i + 1, http11, n) == 0) {
			*out = http11;
			*outlen = sizeof(http11);
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

static SSL_CTX *server_ctx_new(const struct tls_ca *ca, const struct tls_host *h,
			       struct error *err)
{
	_cleanup_(X509_freep) X509 *leaf = leaf_cert_new(ca, h);
	_cleanup_(SSL_CTX_freep) SSL_CTX *ctx = NULL;

	if (!leaf) {
		ssl_error(err, ENOMEM, "cannot mint a certificate for %s", h->name);
		return NULL;
	}
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		ssl_error(err, ENOMEM, "cannot create a TLS server context");
		return NULL;
	}
	/* The agent decides how many handshakes happen: a session cache per
	 * context (20k sessions by default) times 1024 contexts is memory
	 * it could claim at will. Resumption still works with tickets. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	/* Client-initiated renegotiation costs the server a handshake per
	 * request of the client. */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate(ctx, leaf) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1 ||
	    SSL_CTX_add1_chain_cert(ctx, ca->cert) != 1) {
		ssl_error(err, ENOMEM, "cannot set up the TLS server context for %s", h->name);
		return NULL;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	return steal_pointer(&ctx);
}

/* FNV-1a. Unkeyed on purpose: a table of at most TLS_CACHE_MAX entries
 * whose worst case (every host in one bucket) is a scan of 1024 short
 * strings, small next to the handshake that follows each lookup. */
static uint32_t host_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

static void lru_unlink(struct tls_ca *ca, struct tls_leaf *l)
{
	if (l->newer)
		l->newer->older = l->older;
	else
		ca->newest = l->older;
	if (l->older)
		l->older->newer = l->newer;
	else
		ca->oldest = l->newer;
	l->newer = l->older = NULL;
}

static void lru_push(struct tls_ca *ca, struct tls_leaf *l)
{
	l->newer = NULL;
	l->older = ca->newest;
	if (ca->newest)
		ca->newest->newer = l;
	else
		ca->oldest = l;
	ca->newest = l;
}

static void cache_evict_oldest(struct tls_ca *ca)
{
	struct tls_leaf *l = ca->oldest, **pp;

	if (!l)
		return;
	for (pp = &ca->bucket[l->hash & (TLS_CACHE_BUCKETS - 1)]; *pp; pp = &(*pp)->chain) {
		if (*pp == l) {
			*pp = l->chain;
			break;
		}
	}
	lru_unlink(ca, l);
	/* SSL objects made from this context hold their own reference to
	 * it; only the cache's reference goes here. */
	SSL_CTX_free(l->ctx);
	free(l);
	ca->count--;
}

SSL_CTX *tls_ca_server_ctx(struct tls_ca *ca, const char *host, struct error *err)
{
	struct tls_host h;
	struct tls_leaf *l;
	uint32_t hash;
	size_t len;
	char shown[80];

	if (!ca || !host) {
		error_set(err, EINVAL, "no session CA or host");
		return NULL;
	}
	if (tls_host_parse(host, &h) < 0) {
		error_set(err, EINVAL, "\"%s\" is neither a DNS name nor an IP address",
			  printable(host, shown, sizeof(shown)));
		return NULL;
	}
	hash = host_hash(h.name);
	for (l = ca->bucket[hash & (TLS_CACHE_BUCKETS - 1)]; l; l = l->chain) {
		if (l->hash == hash && strcmp(l->host, h.name) == 0) {
			lru_unlink(ca, l);
			lru_push(ca, l);
			return l->ctx;
		}
	}

	len = strlen(h.name);
	l = calloc(1, sizeof(*l) + len + 1);
	if (!l) {
		error_set(err, ENOMEM, "cannot mint a certificate for %s: out of memory", h.name);
		return NULL;
	}
	l->ctx = server_ctx_new(ca, &h, err);
	if (!l->ctx) {
		free(l);
		return NULL;
	}
	memcpy(l->host, h.name, len + 1);
	l->hash = hash;
	if (ca->count >= TLS_CACHE_MAX)
		cache_evict_oldest(ca);
	l->chain = ca->bucket[hash & (TLS_CACHE_BUCKETS - 1)];
	ca->bucket[hash & (TLS_CACHE_BUCKETS - 1)] = l;
	lru_push(ca, l);
	ca->count++;
	return l->ctx;
}

/* ------------------------------------------------------------------ */
/* Upstream client                                                     */
/* ------------------------------------------------------------------ */

/* Bundles are a few hundred KiB (Debian's is about 220 KiB). */
#define TLS_CA_FILE_MAX (8 * 1024 * 1024)

/* Never prompt on a terminal for a passphrase a bundle might ask for. */
static int no_password(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* Read the file ourselves rather than through OpenSSL's fopen: the fd is
 * O_CLOEXEC, so a sandbox forked meanwhile does not inherit it. */
static int load_ca_file(SSL_CTX *ctx, const char *path, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *data = NULL;
	_cleanup_(BIO_freep) BIO *bio = NULL;
	_cleanup_(x509_info_stack_free) STACK_OF(X509_INFO) *infos = NULL;
	X509_STORE *store = SSL_CTX_get_cert_store(ctx);
	struct stat st;
	size_t n = 0;
	int count = 0;

	if (fd < 0)
		return error_sys(err, errno, "%s: cannot open the CA file", path);
	if (fstat(fd, &st) < 0)
		return error_sys(err, errno, "%s: cannot stat the CA file", path);
	if (!S_ISREG(st.st_mode))
		return error_set(err, EINVAL, "%s: the CA file is not a regular file", path);
	if (st.st_size > TLS_CA_FILE_MAX)
		return error_set(err, EFBIG, "%s: the CA file is larger than %d MiB", path,
				 TLS_CA_FILE_MAX / (1024 * 1024));
	data = malloc((size_t)st.st_size + 1);
	if (!data)
		return error_set(err, ENOMEM, "%s: out of memory", path);
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, data + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return error_sys(err, errno, "%s: cannot read the CA file", path);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	bio = BIO_new_mem_buf(data, (int)n);
	if (!bio)
		return ssl_error(err, ENOMEM, "%s: out of memory", path);
	infos = PEM_X509_INFO_read_bio(bio, NULL, no_password, NULL);
	if (!infos)
		return ssl_error(err, EINVAL, "%s: not a PEM certificate bundle", path);
	for (int i = 0; i < sk_X509_INFO_num(infos); i++) {
		X509_INFO *info = sk_X509_INFO_value(infos, i);

		if (!info->x509)
			continue;
		if (X509_STORE_add_cert(store, info->x509) != 1)
			return ssl_error(err, EINVAL, "%s: certificate %d cannot be trusted", path,
					 count + 1);
		count++;
	}
	/* Text around the PEM blocks leaves "no start line" behind. */
	ERR_clear_error();
	if (count == 0)
		return error_set(err, EINVAL, "%s: no PEM certificate in the CA file", path);
	return 0;
}

SSL_CTX *tls_client_ctx_new(const char *extra_ca_file, struct error *err)
{
	static const unsigned char alpn[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };
	_cleanup_(SSL_CTX_freep) SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (!ctx) {
		ssl_error(err, ENOMEM, "cannot create a TLS client context");
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* "*.example.com" matches a whole label only, never "f*.example.com". */
	X509_VERIFY_PARAM_set_hostflags(SSL_CTX_get0_param(ctx),
					X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		ssl_error(err, EINVAL, "cannot require TLS 1.2");
		return NULL;
	}
	if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
		ssl_error(err, EIO, "cannot use the system trust store");
		return NULL;
	}
	if (extra_ca_file && load_ca_file(ctx, extra_ca_file, err) < 0)
		return NULL;
	/* Inverted convention: 0 is success. */
	if (SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn)) != 0) {
		ssl_error(err, ENOMEM, "cannot set ALPN");
		return NULL;
	}
	return steal_pointer(&ctx);
}

int tls_client_set_host(SSL *ssl, const char *host, struct error *err)
{
	struct tls_host h;
	char shown[80];

	if (!ssl || !host)
		return error_set(err, EINVAL, "no TLS connection or host");
	if (tls_host_parse(host, &h) < 0)
		return error_set(err, EINVAL, "\"%s\" is neither a DNS name nor an IP address",
				 printable(host, shown, sizeof(shown)));
	if (h.ip) {
		/* RFC 6066 3: literal addresses are not sent as SNI. */
		if (X509_VERIFY_PARAM_set1_ip(SSL_get0_param(ssl), h.addr, h.addr_len) != 1)
			return ssl_error(err, ENOMEM, "%s: cannot set the expected address", h.name);
		return 0;
	}
	if (SSL_set_tlsext_host_name(ssl, h.name) != 1)
		return ssl_error(err, EINVAL, "%s: cannot set SNI", h.name);
	if (SSL_set1_host(ssl, h.name) != 1)
		return ssl_error(err, ENOMEM, "%s: cannot set the expected host name", h.name);
	return 0;
}
