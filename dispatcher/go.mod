module github.com/esign-svc/esign/dispatcher

go 1.26.8
