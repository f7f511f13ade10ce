module github.com/esign-svc/esign/tests

go 1.26.8
