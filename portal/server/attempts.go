package server

import (
	"net/http"
	"sync"
	"time"
)

// attemptTTL is how long the outcome of a slot's forwarded signature is kept when no purge
// comes (a session never sealed, a portal not named in PORTAL_API_URL).
const attemptTTL = 24 * time.Hour

// attempts is the portal's only state: per slot sessionId, the signature being forwarded
// (result nil) or the service's acceptance of it. Safe for concurrent use.
type attempts struct {
	mu   sync.Mutex
	now  func() time.Time
	byID map[string]*attempt
}

type attempt struct {
	res *result // nil while in flight
	at  time.Time
}

func newAttempts(now func() time.Time) *attempts {
	return &attempts{now: now, byID: map[string]*attempt{}}
}

// begin claims sessionID for a new forward. It answers the stored acceptance (done) when the
// slot's signature was already accepted, a non-nil in-flight marker when one is being sent,
// and (nil, false) when the caller should send it.
func (a *attempts) begin(sessionID string) (*result, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sweep()
	if x, ok := a.byID[sessionID]; ok {
		if x.res != nil {
			return x.res, true
		}
		return &result{}, false
	}
	a.byID[sessionID] = &attempt{at: a.now()}
	return nil, false
}

// finish records the outcome: only an acceptance (200) is kept; anything else frees the slot for
// another try.
func (a *attempts) finish(sessionID string, res *result) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if res == nil || res.Status != http.StatusOK {
		delete(a.byID, sessionID)
		return
	}
	a.byID[sessionID] = &attempt{res: res, at: a.now()}
}

// forget drops what is held for the sessionIds; it reports how many were held.
func (a *attempts) forget(sessionIDs []string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, id := range sessionIDs {
		if _, ok := a.byID[id]; ok {
			delete(a.byID, id)
			n++
		}
	}
	return n
}

// sweep drops outcomes older than attemptTTL (caller holds mu).
func (a *attempts) sweep() {
	cut := a.now().Add(-attemptTTL)
	for id, x := range a.byID {
		if x.at.Before(cut) {
			delete(a.byID, id)
		}
	}
}

// Held reports whether the portal holds anything for the slot sessionId (the purge tests).
func (s *Server) Held(sessionID string) bool {
	s.attempts.mu.Lock()
	defer s.attempts.mu.Unlock()
	_, ok := s.attempts.byID[sessionID]
	return ok
}
