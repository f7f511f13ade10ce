module github.com/esign-svc/esign/dispatcher

go 1.26.8

require github.com/esign-svc/esign/shared v0.0.0-00010101000000-000000000000

require github.com/skip2/go-qrcode v0.0.0-20200617195104-da1b6568686e

replace github.com/esign-svc/esign/shared => ../shared
