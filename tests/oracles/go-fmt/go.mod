module propertyoverride/oracles/gofmt

go 1.26
