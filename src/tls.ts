import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { FILE_SYSTEM_REASONS } from "./file-system";

/** A certificate and its key, read once at start and checked (`serve --tls-cert/--tls-key`). */
export interface TlsPair {
  certFile: string;
  /** PEM texts, as the server takes them. */
  cert: string;
  key: string;
  /** When the certificate starts and stops being valid (ms since the epoch). */
  validFrom: number;
  validTo: number;
}

export interface GivenFile {
  /** The flag or variable that named it. */
  label: string;
  file: string;
}

/**
 * Reads a certificate and key, or says what keeps them from serving HTTPS in the
 * operator's terms (the TLS library's own words are `PEM routines:OPENSSL_internal:NO_START_LINE`).
 */
export function readTlsPair(cert: GivenFile, key: GivenFile): TlsPair | string {
  const read = ({ label, file }: GivenFile): string | { problem: string } => {
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      return { problem: `${label}: cannot read ${file}: ${FILE_SYSTEM_REASONS[code] ?? code}` };
    }
  };
  const certText = read(cert);
  if (typeof certText !== "string") return certText.problem;
  const keyText = read(key);
  if (typeof keyText !== "string") return keyText.problem;
  let certificate: X509Certificate;
  let privateKey: KeyObject;
  try {
    certificate = new X509Certificate(certText);
  } catch {
    return `${cert.label}: ${cert.file} is not a PEM certificate (-----BEGIN CERTIFICATE-----)`;
  }
  try {
    privateKey = createPrivateKey(keyText);
  } catch {
    return `${key.label}: ${key.file} is not a PEM private key without a passphrase (-----BEGIN PRIVATE KEY-----)`;
  }
  if (!certificate.checkPrivateKey(privateKey))
    return `${key.label}: ${key.file} is not the private key of the certificate in ${cert.file}`;
  return {
    certFile: cert.file,
    cert: certText,
    key: keyText,
    validFrom: Date.parse(certificate.validFrom),
    validTo: Date.parse(certificate.validTo),
  };
}

const DAY_MS = 86_400_000;
/** How long before a certificate ends the server starts saying so. */
export const CERTIFICATE_WARNING_DAYS = 30;

/**
 * What an operator should hear about the certificate the server serves: clients refuse
 * one that has expired or is not valid yet, and a renewed one takes effect only at a
 * restart (Bun cannot change a listening server's certificate: oven-sh/bun#43815).
 */
export function certificateWarning(pair: TlsPair, now: number): string | null {
  if (now >= pair.validTo)
    return "the TLS certificate has expired: clients refuse it; renew it and restart";
  if (now < pair.validFrom)
    return "the TLS certificate is not valid yet: clients refuse it until its validFrom";
  if (pair.validTo - now < CERTIFICATE_WARNING_DAYS * DAY_MS)
    return `the TLS certificate expires within ${CERTIFICATE_WARNING_DAYS} days: renew it and restart`;
  return null;
}

/** Says `certificateWarning` at start and once a day while it holds; returns the stop. */
export function watchCertificate(
  pair: TlsPair,
  warn: (message: string, fields: Record<string, unknown>) => void,
  now: () => number,
): () => void {
  const check = () => {
    const warning = certificateWarning(pair, now());
    if (!warning) return;
    const iso = (ms: number) => new Date(ms).toISOString();
    warn(warning, {
      file: pair.certFile,
      validFrom: iso(pair.validFrom),
      validTo: iso(pair.validTo),
    });
  };
  check();
  const timer = setInterval(check, DAY_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}
