package esign

// MaxSignaturePNG is the largest signature image a signer may submit, in bytes: the callback
// refuses a larger one before anything is stored, and the store will not keep one (413
// signature_too_large).
const MaxSignaturePNG = 600 * 1024
