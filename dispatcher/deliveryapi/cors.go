package deliveryapi

import "github.com/esign-svc/esign/shared/web"

// recipientCORS is the CORS policy of the recipient routes: the portal origin only; the
// delivery token travels in the URL.
func recipientCORS(origin string) web.CORS {
	return web.CORS{Origin: origin, AllowHeaders: "Content-Type", ExposeHeaders: "Retry-After, X-Correlation-Id"}
}
