// Package graph uploads documents into a customer's SharePoint document library through
// Microsoft Graph, for delivery mode `sharepoint` and `both` (the request's sharePointTarget
// {siteUrl, libraryPath, folderPath}).
//
// An upload takes three Graph calls, each shape taken from the Graph v1.0 reference:
//
//  1. GET  /sites/{hostname}:/{server-relative-path}            (get site by path)
//  2. GET  /sites/{site-id}/drives                               (list drives; paged)
//  3. PUT  /drives/{drive-id}/root:/{folder}/{file}:/content     (simple upload, <= 4 MiB)
//     or POST /drives/{drive-id}/root:/{folder}/{file}:/createUploadSession followed by PUTs of
//     byte ranges (multiples of 320 KiB, Content-Range) to the session's uploadUrl.
//
// Authentication is OAuth 2.0 client credentials against Entra ID (tenant, client id, secret,
// scope https://graph.microsoft.com/.default), cached until shortly before expiry, or any
// azcore.TokenCredential (a managed identity). The app registration needs admin-consented
// write access to the library (Sites.ReadWrite.All, or Sites.Selected with a write grant on the
// site); without it Graph answers 403, which comes back as apperr KindForbidden `graph_forbidden`.
//
// The package never logs; tokens and the client secret never appear in errors, and Config's
// String form masks the secret.
//
// Settings (read and validated by shared/config, which builds the Client): GRAPH_TENANT_ID,
// GRAPH_CLIENT_ID and GRAPH_CLIENT_SECRET, or GRAPH_USE_MANAGED_IDENTITY (and
// GRAPH_IDENTITY_CLIENT_ID); GRAPH_AUTHORITY_HOST and GRAPH_BASE_URL (optional, for national
// clouds); GRAPH_ALLOWED_SITE_HOSTS (optional, extra siteUrl hosts); GRAPH_CA_FILE (optional).
// They are not the spec's SERVICE_DISPATCHER_* settings: those are the CRM/ERP side's identity
// for calling the dispatcher, a different app registration and direction.
package graph
