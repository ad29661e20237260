module example.com/widgets

go 1.22

require k8s.io/apimachinery v0.30.0
