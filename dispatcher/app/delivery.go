package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/esign-svc/esign/dispatcher/deliveryapi"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/graph"
)

// Secure delivery sessions: requester and recipient routes. The Graph client (GRAPH_* settings,
// read here through the app's lookup) only validates sharePointTarget at create time; the
// processor uploads. Without GRAPH_* settings modes sharepoint and both are refused (400).
func init() {
	areas = append(areas, area{
		name:    "delivery",
		invoked: []string{"CreateDelivery"},
		routes: func(mux *http.ServeMux, d *Deps) error {
			gc, err := delivery.GraphClientFromLookup(d.Config.Lookup)
			if err != nil {
				return err
			}
			store, err := deliverystore.New(d.Account, deliverystore.TableSessions, deliverystore.TableIndex)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := store.Ensure(ctx); err != nil {
				return fmt.Errorf("delivery tables: %w", err)
			}
			var check func(delivery.Target, string) error
			if gc != nil {
				check = func(t delivery.Target, name string) error {
					return gc.Validate(graph.Target{SiteURL: t.SiteURL, LibraryPath: t.LibraryPath, FolderPath: t.FolderPath}, name)
				}
			}
			(&deliveryapi.API{
				Creator: &delivery.Creator{Store: store, Docs: d.Blobs, CheckTarget: check, Tokens: d.Tokens,
					Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher, PortalURL: d.Config.PortalURL, Now: time.Now},
				Store: store, Blobs: d.Blobs, Tokens: d.Tokens, Lapsed: deliveryapi.LapsedCodec(d.Config.Tokens),
				Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher, Verifier: d.Verifier, Licence: d.Licence,
				Email: d.Senders.Email, PortalURL: d.Config.PortalURL, PortalOrigin: d.Config.PortalOrigin, Now: time.Now,
			}).Routes(mux)
			return nil
		},
	})
}
