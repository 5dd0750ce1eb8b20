/**
 * A self-signed certificate for 127.0.0.1 and localhost (EC P-256, valid for a hundred years) and its key: a TLS
 * upstream that no client trusts, for tests of what the gateway says when it meets one. Test-only; never a secret.
 */
export const SELF_SIGNED = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvqLQKcQiDVK1ih8j
go3TIUeCf9oxya9ozb0HAfX5pOyhRANCAATRHeDm6iCo6LO+gjrVyr5BKZ0qko/I
AsLEFl7EFAvmKqgWU00fUIu6Ft/Kll7ofpixC586nhZ+22S2Y1Lk4iTl
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUJbtuvXGOq/YOqsidschIkFobiVQwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNjE3MzYzMloYDzIxMjYxMTAy
MTczNjMyWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATRHeDm6iCo6LO+gjrVyr5BKZ0qko/IAsLEFl7EFAvmKqgWU00fUIu6
Ft/Kll7ofpixC586nhZ+22S2Y1Lk4iTlo28wbTAdBgNVHQ4EFgQUTIDEdDiMApeG
gFPdHQ+eKAcAwGAwHwYDVR0jBBgwFoAUTIDEdDiMApeGgFPdHQ+eKAcAwGAwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDSQAwRgIhAO8znqyy748H2LETVmtCBQF/j+5zZOK7K34KlPtKKYlUAiEA
nUcKp9Qrve9/vXU7hZLDg9YX1/T6+shDOpia1pdpi60=
-----END CERTIFICATE-----
`,
}
