package portalapi

import "github.com/esign-svc/esign/shared/web"

// portalCORS is the CORS policy of the portal routes and the document proxy: the portal origin
// only; the access token travels in the Authorization header.
func portalCORS(origin string) web.CORS {
	return web.CORS{Origin: origin, AllowHeaders: "Authorization, Content-Type, Range, If-Range",
		ExposeHeaders: "Accept-Ranges, Content-Disposition, Content-Length, Content-Range, ETag, Retry-After, X-Correlation-Id"}
}
