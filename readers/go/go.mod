module pinkeeper.local/reader

go 1.19
