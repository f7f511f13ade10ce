module github.com/esign-svc/esign/processor

go 1.26.8
