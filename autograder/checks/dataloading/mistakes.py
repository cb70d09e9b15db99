"""The known mistakes of the dataloading exercises and the signature each leaves in a grade (generated).

Written by ``python -m tests.mistakes.signatures --write dataloading`` from ``tests/mutants/dataloading.py``;
``tests/mistakes/test_signatures.py`` fails when it is stale. ``signature``: ``{item: kind of failure}`` of every
item the mistake fails when every variant runs (seed 0); ``visible``: the same with the visible variants only
(the student kit). ``says``: the mistake, for the student (``autograder.feedback``: "This looks like: ...").
``DIGEST``: of the files the signatures were graded from (the mutants, the topic's checks and oracles).
"""

DIGEST = "1cfa55a50f634c3b"

MISTAKES = ({'id': "tutorial's naive tar dataset (duplicates with workers)",
  'says': 'TarImageDataset gives every DataLoader worker every shard, so samples come more than once.',
  'signature': {'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
                'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'},
  'visible': {'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
              'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'}},
 {'id': 'one worker per shard, or raise',
  'says': 'TarImageDataset gives each worker exactly one shard and fails when the counts differ.',
  'signature': {'tar_dataset_workers': 'failed: with # shard DataLoader DataLoader worker process # raised '
                                       'ValueError: use exactly',
                'tar_dataset_ranks': 'failed: with # shards DataLoader rank # of world_size=#: DataLoader worker '
                                     'process #'},
  'visible': {'tar_dataset_workers': 'failed: with # shard DataLoader DataLoader worker process # raised '
                                     'ValueError: use exactly',
              'tar_dataset_ranks': 'failed: with # shards DataLoader rank # of world_size=#: DataLoader worker '
                                   'process #'}},
 {'id': "drops the remainder when shards don't divide evenly",
  'says': 'TarImageDataset drops the shards left over when they do not divide evenly among the workers.',
  'signature': {'tar_dataset_workers': 'failed: with # shard DataLoader # never came out e.g. expected each of',
                'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # never came'},
  'visible': {'tar_dataset_workers': 'failed: with # shard DataLoader # never came out e.g. expected each of',
              'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # never came'}},
 {'id': 'ignores rank',
  'says': 'TarImageDataset ignores the rank, so every process reads the same shards.',
  'signature': {'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'},
  'visible': {'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'}},
 {'id': 'returns RGB',
  'says': "TarImageDataset returns images in RGB order instead of OpenCV's BGR.",
  'signature': {'tar_dataset_decoding': 'failed: with TarImageDataset over # shards of images no DataLoader: the '
                                        'image has',
                'tar_dataset_workers': 'failed: with # shard DataLoader the image yielded with name is not that',
                'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: the image '
                                     'yielded'},
  'visible': {'tar_dataset_decoding': 'failed: with TarImageDataset over # shards of images no DataLoader: the '
                                      'image has',
              'tar_dataset_workers': 'failed: with # shard DataLoader the image yielded with name is not that',
              'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: the image '
                                   'yielded'}},
 {'id': 'leaks open files (never closes a shard)',
  'says': 'TarImageDataset never closes the shards it opens.',
  'signature': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
                'tar_dataset_resources': 'failed: during a full pass over TarImageDataset of # shards no '
                                         "DataLoader Python's"},
  'visible': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
              'tar_dataset_resources': 'failed: during a full pass over TarImageDataset of # shards no DataLoader '
                                       "Python's"}},
 {'id': 'keeps shards open on the dataset',
  'says': 'TarImageDataset keeps open shards on the dataset object.',
  'signature': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
                'tar_dataset_resources': 'failed: after a full pass over TarImageDataset of # shards no DataLoader '
                                         'these'},
  'visible': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
              'tar_dataset_resources': 'failed: after a full pass over TarImageDataset of # shards no DataLoader '
                                       'these'}},
 {'id': 'keeps every member (getmembers)',
  'says': 'TarImageDataset reads the list of every member of a shard into memory.',
  'signature': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
                'tar_dataset_resources': 'failed: the peak memory of a pass grew from # KiB over a'},
  'visible': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
              'tar_dataset_resources': 'failed: the peak memory of a pass grew from # KiB over a'}},
 {'id': 'decodes non-image members',
  'says': 'TarImageDataset tries to decode members that are not images.',
  'signature': {'tar_dataset_decoding': 'failed: with TarImageDataset over # shards of images no DataLoader: the '
                                        'names came',
                'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
                'tar_dataset_workers': 'failed: with # shard DataLoader # names are not image members of the',
                'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # names are',
                'tar_dataset_resources': 'failed: with a full pass over TarImageDataset of # shards no DataLoader: '
                                         '#'},
  'visible': {'tar_dataset_decoding': 'failed: with TarImageDataset over # shards of images no DataLoader: the '
                                      'names came',
              'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
              'tar_dataset_workers': 'failed: with # shard DataLoader # names are not image members of the',
              'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # names are',
              'tar_dataset_resources': 'failed: with a full pass over TarImageDataset of # shards no DataLoader: '
                                       '#'}},
 {'id': 'reads with IMREAD_UNCHANGED',
  'says': 'TarImageDataset decodes with `IMREAD_UNCHANGED`, so images keep their own number of channels.',
  'signature': {'tar_dataset_decoding': 'failed: with TarImageDataset over # shards of images no DataLoader: the '
                                        'image has',
                'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
                'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'},
  'visible': {'tar_dataset_decoding': 'failed: with TarImageDataset over # shards of images no DataLoader: the '
                                      'image has',
              'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
              'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'}},
 {'id': 'skips corrupt images and missing shards',
  'says': 'TarImageDataset silently skips corrupt images and missing shards instead of raising.',
  'signature': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
                'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
                'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'},
  'visible': {'tar_dataset_errors': 'failed: with a shard whose member is random bytes: a full pass raised',
              'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
              'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'}},
 {'id': 'finds a missing shard only after yielding',
  'says': 'TarImageDataset finds a missing shard only after it has yielded samples.',
  'signature': {'tar_dataset_errors': 'failed: TarImageDataset FileNotFoundError came only after # samples',
                'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
                'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'},
  'visible': {'tar_dataset_errors': 'failed: TarImageDataset FileNotFoundError came only after # samples',
              'tar_dataset_workers': 'failed: with # shard DataLoader # came out more than once e.g. expected',
              'tar_dataset_ranks': 'failed: with # shards DataLoader on each rank of world_size=#: # came out'}},
 {'id': 'folder: random.choice ignores the index',
  'says': 'ImageDirectoryDataset picks a random image instead of the one at the index.',
  'signature': {'image_directory_dataset': 'failed: dataset gives another file each time it is asked asked four '
                                           'times'},
  'visible': {'image_directory_dataset': 'failed: dataset gives another file each time it is asked asked four '
                                         'times'}},
 {'id': 'folder: unsorted paths',
  'says': 'ImageDirectoryDataset does not sort its paths, so the order depends on the file system.',
  'signature': {'image_directory_dataset': 'failed: dataset lists the files in an order of its own not sorted'},
  'visible': {'image_directory_dataset': 'failed: dataset lists the files in an order of its own not sorted'}},
 {'id': 'folder: wraps the index around',
  'says': 'ImageDirectoryDataset wraps an index out of range around instead of raising IndexError.',
  'signature': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images: dataset '
                                           'returned ndarray expected'},
  'visible': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images: dataset '
                                         'returned ndarray expected'}},
 {'id': 'folder: returns RGB',
  'says': "ImageDirectoryDataset returns images in RGB order instead of OpenCV's BGR.",
  'signature': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images dataset the '
                                           'image has'},
  'visible': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images dataset the '
                                         'image has'}},
 {'id': 'folder: ignores the pattern',
  'says': 'ImageDirectoryDataset ignores the file pattern and reads every file.',
  'signature': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images len is # '
                                           'expected'},
  'visible': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images len is # '
                                         'expected'}},
 {'id': 'folder: reads subfolders too',
  'says': 'ImageDirectoryDataset also reads the images in subfolders of root, not only the files directly in it.',
  'signature': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images: len is #: '
                                           'it'},
  'visible': {'image_directory_dataset': 'failed: with ImageDirectoryDataset on a folder of # images: len is #: '
                                         'it'}},
 {'id': 'folder: natural sort',
  'says': 'ImageDirectoryDataset sorts the names by the numbers in them (img8 before img10), not in sorted path '
          'order.',
  'signature': {'image_directory_dataset': 'failed: dataset follows the numbers in the file names a natural sort '
                                           'not'},
  'visible': {'image_directory_dataset': 'failed: dataset follows the numbers in the file names a natural sort '
                                         'not'}},
 {'id': 'shards: ceil-sized chunks',
  'says': 'write_shards splits the samples into chunks of the rounded-up size, so the last shards are short or '
          'empty.',
  'signature': {'write_shards': 'failed: write_shards wrote shards of images sizes may differ by at most one'},
  'visible': {}},
 {'id': 'shards: drops the remainder',
  'says': 'write_shards drops the samples left over when they do not divide evenly.',
  'signature': {'write_shards': 'failed: write_shards images in more than one shard: in none'},
  'visible': {'write_shards': 'failed: write_shards images in more than one shard: in none'}},
 {'id': 'shards: full paths as member names',
  'says': 'write_shards names the members by their full paths instead of their file names.',
  'signature': {'write_shards': 'failed: write_shards wrote members that are not image file names'},
  'visible': {'write_shards': 'failed: write_shards wrote members that are not image file names'}},
 {'id': 'shards: unseeded shuffle',
  'says': 'write_shards shuffles without the given seed, so two runs differ.',
  'signature': {'write_shards': 'failed: write_shards called twice with the same input wrote different shards'},
  'visible': {'write_shards': 'failed: write_shards called twice with the same input wrote different shards'}},
 {'id': 'shards: no ValueError',
  'says': 'write_shards does not raise ValueError for an impossible number of shards.',
  'signature': {'write_shards': 'failed: write_shards did not raise ValueError'},
  'visible': {'write_shards': 'failed: write_shards did not raise ValueError'}},
 {'id': 'collate: channels last',
  'says': 'collate_images returns channels last instead of channels first.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy image images has shape expected '
                                         'To try',
                'collate_images_loader': 'failed: with DataLoader batch #: images has shape expected To try it: '
                                         'collate_images'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy image images has shape expected To '
                                       'try',
              'collate_images_loader': 'failed: with DataLoader batch #: images has shape expected To try it: '
                                       'collate_images'}},
 {'id': 'collate: centred (padding on top and left too)',
  'says': 'collate_images centres each image instead of padding at the bottom and right only.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy images image # starts at not in',
                'collate_images_loader': 'failed: with DataLoader batch #: image # starts at not in the top-left'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy images image # starts at not in',
              'collate_images_loader': 'failed: with DataLoader batch #: image # starts at not in the top-left'}},
 {'id': 'collate: resizes instead of padding',
  'says': 'collate_images resizes the images instead of padding them.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy images image # its padding holds '
                                         'varying',
                'collate_images_loader': 'failed: with DataLoader batch #: image # differs from its input pixels: '
                                         '#'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy images image # its padding holds '
                                       'varying',
              'collate_images_loader': 'failed: with DataLoader batch #: image # differs from its input pixels: '
                                       '#'}},
 {'id': 'collate: int32 sizes',
  'says': 'collate_images returns the sizes as int32 instead of int64.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy image sizes is a torch.int# '
                                         'tensor of',
                'collate_images_loader': 'failed: with DataLoader batch #: sizes is a torch.int# tensor of shape '
                                         'on'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy image sizes is a torch.int# tensor '
                                       'of',
              'collate_images_loader': 'failed: with DataLoader batch #: sizes is a torch.int# tensor of shape '
                                       'on'}},
 {'id': 'collate: sizes as (W, H)',
  'says': 'collate_images returns the sizes as (width, height) instead of (height, width).',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy image sizes holds expected To try '
                                         'it',
                'collate_images_loader': 'failed: with DataLoader batch #: sizes holds expected To try it: '
                                         'collate_images'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy image sizes holds expected To try '
                                       'it',
              'collate_images_loader': 'failed: with DataLoader batch #: sizes holds expected To try it: '
                                       'collate_images'}},
 {'id': 'collate: stacks (only equal sizes work)',
  'says': 'collate_images stacks the images, which works only when they all have the same size.',
  'signature': {'collate_images_values': 'failed: collate_images raised RuntimeError: stack expects each tensor to '
                                         'be equal size but',
                'collate_images_copies': 'failed: collate_images raised RuntimeError: stack expects each tensor to '
                                         'be equal size but',
                'collate_images_loader': 'failed: collate_images raised RuntimeError: stack expects each tensor to '
                                         'be equal size but'},
  'visible': {'collate_images_values': 'failed: collate_images raised RuntimeError: stack expects each tensor to '
                                       'be equal size but',
              'collate_images_copies': 'failed: collate_images raised RuntimeError: stack expects each tensor to '
                                       'be equal size but',
              'collate_images_loader': 'failed: collate_images raised RuntimeError: stack expects each tensor to '
                                       'be equal size but'}},
 {'id': 'collate: float output',
  'says': 'collate_images returns a float batch instead of uint8.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy image images has dtype '
                                         'torch.float# expected torch.uint#',
                'collate_images_loader': 'failed: with DataLoader batch #: images has dtype torch.float# expected '
                                         'torch.uint# To try'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy image images has dtype torch.float# '
                                       'expected torch.uint#',
              'collate_images_loader': 'failed: with DataLoader batch #: images has dtype torch.float# expected '
                                       'torch.uint# To try'}},
 {'id': 'collate: pads with 114',
  'says': 'collate_images pads with a grey value instead of zeros.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy images image # its padding holds '
                                         '#',
                'collate_images_loader': 'failed: with DataLoader batch #: image # its padding holds # everywhere '
                                         'around'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy images image # its padding holds #',
              'collate_images_loader': 'failed: with DataLoader batch #: image # its padding holds # everywhere '
                                       'around'}},
 {'id': 'collate: a list of tensors',
  'says': 'collate_images returns a list of tensors instead of one batch tensor.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy image images is a list of #',
                'collate_images_copies': 'failed: with collate_images on # NumPy image images is a list of #',
                'collate_images_loader': 'failed: with DataLoader batch #: images is a list of # items not'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy image images is a list of #',
              'collate_images_copies': 'failed: with collate_images on # NumPy image images is a list of #',
              'collate_images_loader': 'failed: with DataLoader batch #: images is a list of # items not'}},
 {'id': 'collate: drops the names',
  'says': "collate_images drops the samples' names.",
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy image collate_images returned '
                                         'tuple expected a tuple',
                'collate_images_copies': 'failed: with collate_images on # NumPy image collate_images returned '
                                         'tuple expected a tuple',
                'collate_images_loader': 'failed: with DataLoader batch #: collate_images returned tuple expected '
                                         'a tuple To try'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy image collate_images returned tuple '
                                       'expected a tuple',
              'collate_images_copies': 'failed: with collate_images on # NumPy image collate_images returned tuple '
                                       'expected a tuple',
              'collate_images_loader': 'failed: with DataLoader batch #: collate_images returned tuple expected a '
                                       'tuple To try'}},
 {'id': 'collate: sorts images by size, not the names',
  'says': 'collate_images reorders the images by size.',
  'signature': {'collate_images_values': 'failed: with collate_images on # NumPy images slot # holds image # not',
                'collate_images_loader': 'failed: with DataLoader batch #: slot # holds image # not image #'},
  'visible': {'collate_images_values': 'failed: with collate_images on # NumPy images slot # holds image # not',
              'collate_images_loader': 'failed: with DataLoader batch #: slot # holds image # not image #'}},
 {'id': 'collate: a view of the input for one image',
  'says': 'collate_images returns a view of the input for a batch of one image instead of a copy.',
  'signature': {'collate_images_copies': 'failed: with collate_images on # NumPy image writing into the returned '
                                         'batch changed'},
  'visible': {'collate_images_copies': 'failed: with collate_images on # NumPy image writing into the returned '
                                       'batch changed'}})
