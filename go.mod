module github.com/localtable/localtable

go 1.24

require (
	github.com/Azure/azure-sdk-for-go/sdk/data/aztables v1.4.1
	github.com/google/go-cmp v0.7.0
)

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.20.0 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.11.2 // indirect
	golang.org/x/net v0.43.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)
