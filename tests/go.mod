module github.com/esign-svc/esign/tests

go 1.26.8

require github.com/esign-svc/esign/shared v0.0.0-00010101000000-000000000000

require github.com/getkin/kin-openapi v0.152.0

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.23.3 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.13.0 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue v1.0.1 // indirect
	github.com/go-openapi/jsonpointer v0.22.5 // indirect
	github.com/go-openapi/swag/jsonname v0.25.5 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/gorilla/mux v1.8.0 // indirect
	github.com/makiuchi-d/gozxing v0.1.1
	github.com/oasdiff/yaml v0.1.1 // indirect
	github.com/oasdiff/yaml3 v0.0.14 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/xerrors v0.0.0-20200804184101-5ec99f83aff1 // indirect
)

replace github.com/esign-svc/esign/shared => ../shared

require (
	github.com/esign-svc/esign/dispatcher v0.0.0-00010101000000-000000000000
	github.com/esign-svc/esign/processor v0.0.0-00010101000000-000000000000
	software.sslmate.com/src/go-pkcs12 v0.7.4
)

replace (
	github.com/esign-svc/esign/dispatcher => ../dispatcher
	github.com/esign-svc/esign/processor => ../processor
)

require github.com/esign-svc/esign/connector v0.0.0-00010101000000-000000000000

replace github.com/esign-svc/esign/connector => ../connector
