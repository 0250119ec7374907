dataset = 'ml-1m'
model = 'NeuMF-end'
main_path = './Data/'
train_rating = main_path + '{}.train.rating'.format(dataset)
