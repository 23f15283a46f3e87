'use strict';
// What pinning reads from a certificate's own DER: the subject's most specific common name (N)
// and the end of its validity. Enough DER for that: definite lengths, one-byte tags.

const { X509Certificate } = require('node:crypto');

class DER {
  constructor(bytes, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.at = start;
    this.end = end;
  }

  more() {
    return this.at < this.end;
  }

  /** The next element: { tag, start, end } of its content. */
  next() {
    const bytes = this.bytes;
    if (this.at + 2 > this.end) throw new Error('ends inside an element');
    const tag = bytes[this.at];
    if ((tag & 0x1f) === 0x1f) throw new Error('has a multi-byte tag');
    let length = bytes[this.at + 1];
    let start = this.at + 2;
    if (length >= 0x80) {
      const count = length & 0x7f;
      if (count < 1 || count > 4 || start + count > this.end) throw new Error('has an invalid length');
      length = 0;
      for (let index = 0; index < count; index++) length = length * 256 + bytes[start + index];
      start += count;
    }
    if (start + length > this.end) throw new Error('has an element longer than its container');
    this.at = start + length;
    return { tag, start, end: start + length };
  }

  /** The content of the next element, which must carry `tag`. */
  inside(tag) {
    const element = this.next();
    if (element.tag !== tag) throw new Error(`has tag 0x${element.tag.toString(16)} where 0x${tag.toString(16)} belongs`);
    return new DER(this.bytes, element.start, element.end);
  }
}

/** The TBSCertificate's validity and subject: { validity, subject } as DER readers. */
function tbsFields(der) {
  const tbs = new DER(der).inside(0x30).inside(0x30);
  let element = tbs.next();
  if (element.tag === 0xa0) element = tbs.next(); // [0] version, then the serial number
  if (element.tag !== 0x02) throw new Error('has no serial number where a certificate has one');
  tbs.inside(0x30); // signature algorithm
  tbs.inside(0x30); // issuer
  const validity = tbs.inside(0x30);
  return { validity, subject: tbs.inside(0x30) };
}

const COMMON_NAME = Buffer.from([0x55, 0x04, 0x03]); // 2.5.4.3
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LONE_SURROGATE = /\p{Cs}/u;

/** A name attribute's string by its ASN.1 type, as OpenSSL's ASN1_STRING_to_UTF8 reads it; null when invalid in it. */
function decodeString(tag, bytes) {
  switch (tag) {
    case 0x0c: // UTF8String
      try {
        return UTF8.decode(bytes);
      } catch {
        return null;
      }
    case 0x1e: { // BMPString: UTF-16BE
      if (bytes.length % 2 !== 0) return null;
      let text = '';
      for (let index = 0; index < bytes.length; index += 2) text += String.fromCharCode((bytes[index] << 8) | bytes[index + 1]);
      return LONE_SURROGATE.test(text) ? null : text;
    }
    case 0x1c: { // UniversalString: UTF-32BE
      if (bytes.length % 4 !== 0) return null;
      let text = '';
      for (let index = 0; index < bytes.length; index += 4) {
        const scalar = ((bytes[index] << 24) | (bytes[index + 1] << 16) | (bytes[index + 2] << 8) | bytes[index + 3]) >>> 0;
        if (scalar > 0x10ffff || (scalar >= 0xd800 && scalar <= 0xdfff)) return null;
        text += String.fromCodePoint(scalar);
      }
      return text;
    }
    case 0x12: // NumericString
    case 0x13: // PrintableString
    case 0x14: // T61String (Latin-1, as OpenSSL reads it)
    case 0x16: // IA5String
    case 0x1a: // VisibleString
      return Buffer.from(bytes).toString('latin1');
    default:
      return null;
  }
}

/**
 * The most specific (last in DER order) common name of a DER certificate's subject, as
 * Android's DistinguishedNameParser.findMostSpecific("CN") and the other pinkeeper readers take
 * it: RDNs in order and, inside a multi-valued RDN, its values as encoded. Null when the subject
 * has none, or when the last one is not a valid string of its type (an earlier one is not used
 * instead: the host then decides alone). Throws when the certificate cannot be read that far.
 * @param {Uint8Array} der
 */
function commonName(der) {
  const { subject } = tbsFields(der);
  let found = null;
  while (subject.more()) {
    const relative = subject.inside(0x31);
    while (relative.more()) {
      const attribute = relative.inside(0x30);
      const type = attribute.next();
      if (type.tag === 0x06 && COMMON_NAME.equals(der.subarray(type.start, type.end))) found = attribute.next();
    }
  }
  return found === null ? null : decodeString(found.tag, der.subarray(found.start, found.end));
}

/** UTCTime or GeneralizedTime (DER: seconds and Z) as Unix seconds; null when it is neither. */
function decodeTime(tag, text) {
  const match = tag === 0x17 ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
    : tag === 0x18 ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text) : null;
  if (match === null) return null;
  let year = Number(match[1]);
  if (tag === 0x17) year += year < 50 ? 2000 : 1900; // RFC 5280
  const [month, day, hour, minute, second] = match.slice(2).map(Number);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return Math.floor(date.getTime() / 1000);
}

/** The certificate's notAfter in Unix seconds, or null when it cannot be read. */
function notAfter(der) {
  try {
    const { validity } = tbsFields(der);
    validity.next(); // notBefore
    const element = validity.next();
    return decodeTime(element.tag, Buffer.from(der.subarray(element.start, element.end)).toString('latin1'));
  } catch {
    return null;
  }
}

/**
 * The subject as RFC 2253 writes it, with UTF-8 left readable, as `pinkeeper validate` prints it:
 * OpenSSL's one-RDN-per-line form that Node gives (`x509.subject`, DER order, values of one RDN
 * joined by " + "), reversed and joined with "," and "+". OpenSSL escapes "+" and control
 * characters inside values, so neither separator can come from a value.
 * @param {X509Certificate} certificate
 */
function subjectRFC2253(certificate) {
  const subject = certificate.subject ?? '';
  if (subject === '') return '';
  return subject.split('\n').reverse().map((line) => line.split(' + ').reverse().join('+')).join(',');
}

/** The length of the DER element at `offset` (header included), or null when there is none. */
function elementLength(data, offset) {
  try {
    const element = new DER(data, offset).next();
    return element.end - offset;
  } catch {
    return null;
  }
}

/**
 * The certificates of a file, in file order (a chain leaf first), as `pinkeeper validate
 * --certificate` reads them: PEM (every CERTIFICATE block; other blocks, such as keys, skipped)
 * or concatenated DER. Each is parsed by OpenSSL (X509Certificate); its DER is what a PEM block
 * re-encodes to, or the bytes as given. Throws an Error whose message says what is wrong.
 * @param {Buffer} data
 * @returns {{ der: Buffer, certificate: X509Certificate }[]}
 */
function readCertificates(data) {
  if (data.includes('-----BEGIN ')) {
    const blocks = [...data.toString('latin1').matchAll(/-----BEGIN CERTIFICATE-----([^-]*)-----END CERTIFICATE-----/g)];
    if (blocks.length === 0) throw new Error('the PEM input holds no CERTIFICATE block');
    return blocks.map((block, index) => {
      const body = block[1].replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4 !== 0) throw new Error(`PEM block ${index + 1} is not valid base64`);
      const certificate = parse(Buffer.from(body, 'base64'), `PEM block ${index + 1}`);
      return { der: certificate.raw, certificate };
    });
  }
  if (data.length === 0) throw new Error('the input is empty');
  if (data[0] !== 0x30) throw new Error('the input is neither PEM nor DER');
  const chain = [];
  for (let offset = 0; offset < data.length;) {
    const length = data[offset] === 0x30 ? elementLength(data, offset) : null;
    const where = `certificate ${chain.length + 1} (at byte ${offset})`;
    if (length === null) throw new Error(`${where}: not a DER X.509 certificate`);
    const der = data.subarray(offset, offset + length);
    chain.push({ der, certificate: parse(der, where) });
    offset += length;
  }
  return chain;
}

function parse(der, where) {
  try {
    return new X509Certificate(der);
  } catch (error) {
    throw new Error(`${where}: not a valid X.509 certificate (${error.message})`);
  }
}

module.exports = { commonName, notAfter, subjectRFC2253, readCertificates };
