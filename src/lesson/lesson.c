// lesson layer
