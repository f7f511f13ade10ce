package sessionstore

import (
	"context"
	"fmt"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Table storage holds at most 64 KiB in one binary property and 1 MiB in one entity, so the PNG
// is split into chunks. MaxSignaturePNG is the largest signature image accepted
// (esign.MaxSignaturePNG: the callback checks it before it gets here).
const (
	chunkSize       = 60 * 1024
	MaxSignaturePNG = esign.MaxSignaturePNG
)

// ErrSignatureCorrupt matches (errors.Is) the error of a signature row that does not read back
// whole. Its JSON columns (fields, consents) are decoded, and checked, by their reader.
var ErrSignatureCorrupt = esign.ErrSignatureCorrupt

// Signature is what a signer submitted with the callback, kept for the seal and purged after it
// (esign.StoredSignature).
type Signature = esign.StoredSignature

// SignatureOp is the extra operation that stores slot's signature in the signing transaction.
func SignatureOp(groupID string, slot int, sig Signature) (tablestore.Op, error) {
	if len(sig.PNG) > MaxSignaturePNG {
		return tablestore.Op{}, apperr.New(apperr.KindTooLarge, "signature_too_large", "the signature image is larger than %d bytes", MaxSignaturePNG)
	}
	props := map[string]any{"fields": sig.Fields, "consents": sig.Consents, "pngSize": int64(len(sig.PNG))}
	n := 0
	for off := 0; off < len(sig.PNG); off += chunkSize {
		end := min(off+chunkSize, len(sig.PNG))
		props[fmt.Sprintf("png%02d", n)] = sig.PNG[off:end]
		n++
	}
	props["pngChunks"] = int64(n)
	return tablestore.InsertOp(tablestore.Entity{PartitionKey: groupID, RowKey: sigKey(slot), Props: props}), nil
}

// Signature reads slot's stored signature. Missing -> KindNotFound (code signature_not_found):
// the slot was not signed, or its signature was purged after the seal. An image of the wrong
// size: ErrSignatureCorrupt.
func (s *Store) Signature(ctx context.Context, groupID string, slot int) (Signature, error) {
	e, err := s.t.Get(ctx, groupID, sigKey(slot))
	if apperr.KindOf(err) == apperr.KindNotFound {
		return Signature{}, apperr.New(apperr.KindNotFound, "signature_not_found", "no stored signature for slot %d", slot)
	}
	if err != nil {
		return Signature{}, err
	}
	n := int(e.Int64("pngChunks"))
	png := make([]byte, 0, e.Int64("pngSize"))
	for i := 0; i < n; i++ {
		png = append(png, e.Bytes(fmt.Sprintf("png%02d", i))...)
	}
	if int64(len(png)) != e.Int64("pngSize") {
		return Signature{}, apperr.Wrap(fmt.Errorf("sessionstore: signature of slot %d is %d bytes, want %d", slot, len(png), e.Int64("pngSize")),
			ErrSignatureCorrupt.Kind, ErrSignatureCorrupt.Code, "%s", ErrSignatureCorrupt.Detail)
	}
	return Signature{PNG: png, Fields: e.String("fields"), Consents: e.String("consents")}, nil
}

// DeleteSignature removes slot's signature row (post-seal clean-up); absent is not an error.
func (s *Store) DeleteSignature(ctx context.Context, groupID string, slot int) error {
	err := s.t.Delete(ctx, groupID, sigKey(slot), "")
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil
	}
	return err
}
