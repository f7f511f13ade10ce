package funcproto

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Serve runs a custom handler's HTTP server on 127.0.0.1:port (the Functions host connects
// there, given FUNCTIONS_CUSTOMHANDLER_PORT) until ctx ends, then shuts it down gracefully,
// letting running invocations finish for up to 20 seconds.
func Serve(ctx context.Context, port string, h http.Handler) error {
	srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
