module github.com/esign-svc/esign/connector

go 1.26.8

require github.com/esign-svc/esign/shared v0.0.0-00010101000000-000000000000

replace github.com/esign-svc/esign/shared => ../shared
