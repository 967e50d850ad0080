"""The fast path's table of root, group and command parameters (cli/fastpath.py).

Generated from the typer declarations by `python -m dshctl.cli.fastpath_gen`; do not edit.
"""
SPEC = {
    'commands': {
        'agent': {
            'options': [
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
            ],
        },
        'agent run': {
            'arguments': [
                {'default': None, 'kind': 'argument', 'name': 'prompt', 'nargs': 1, 'required': True, 'type': 'str'},
            ],
            'body': 'dshctl.cli.agent_run:run',
            'options': [
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'preset', 'nargs': 1, 'opts': ['--preset'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'session', 'nargs': 1, 'opts': ['--session', '-s'], 'required': False, 'type': 'str'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'continue_last', 'opts': ['--continue', '-c'], 'required': False, 'secondary': []},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'model', 'nargs': 1, 'opts': ['--model', '-m'], 'required': False, 'type': 'str'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'show_reasoning', 'opts': ['--show-reasoning'], 'required': False, 'secondary': []},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
                {'default': 'text', 'kind': 'option', 'multiple': False, 'name': 'fmt', 'nargs': 1, 'opts': ['--format', '-f'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'permissions', 'nargs': 1, 'opts': ['--permissions'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'approval', 'nargs': 1, 'opts': ['--approval'], 'required': False, 'type': 'str'},
            ],
        },
        'lint': {
            'arguments': [
                {'default': None, 'kind': 'argument', 'name': 'paths', 'nargs': -1, 'required': False, 'type': 'str'},
            ],
            'body': 'dshctl.cli.lint_run:run',
            'options': [
                {'default': 'auto', 'kind': 'option', 'multiple': False, 'name': 'fmt', 'nargs': 1, 'opts': ['--format', '-f'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'config', 'nargs': 1, 'opts': ['--config'], 'required': False, 'type': 'path'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'select', 'nargs': 1, 'opts': ['--select'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'ignore', 'nargs': 1, 'opts': ['--ignore'], 'required': False, 'type': 'str'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'strict', 'opts': ['--strict'], 'required': False, 'secondary': []},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'kind', 'nargs': 1, 'opts': ['--kind'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'stdin_filename', 'nargs': 1, 'opts': ['--stdin-filename'], 'required': False, 'type': 'str'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'list_rules', 'opts': ['--list-rules'], 'required': False, 'secondary': []},
                {'default': None, 'kind': 'option', 'max': 1024, 'min': 1, 'multiple': False, 'name': 'jobs', 'nargs': 1, 'opts': ['--jobs', '-j'], 'required': False, 'type': 'int'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'no_cache', 'opts': ['--no-cache'], 'required': False, 'secondary': []},
            ],
        },
        'plugin': {
            'options': [
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
            ],
        },
        'plugin add': {
            'arguments': [
                {'default': None, 'kind': 'argument', 'name': 'specs', 'nargs': -1, 'required': True, 'type': 'str'},
            ],
            'body': 'dshctl.cli.plugin_run:add',
            'options': [
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'offline', 'opts': ['--offline'], 'required': False, 'secondary': []},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'dry_run', 'opts': ['--dry-run'], 'required': False, 'secondary': []},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'force', 'opts': ['--force'], 'required': False, 'secondary': []},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'allow_plain', 'opts': ['--allow-plain'], 'required': False, 'secondary': []},
                {'default': 'text', 'kind': 'option', 'multiple': False, 'name': 'fmt', 'nargs': 1, 'opts': ['--format', '-f'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
                {'default': 256, 'kind': 'option', 'max': 1000000, 'min': 0.001, 'multiple': False, 'name': 'max_package_mb', 'nargs': 1, 'opts': ['--max-package-mb'], 'required': False, 'type': 'float'},
                {'default': 50000, 'kind': 'option', 'max': 100000000, 'min': 1, 'multiple': False, 'name': 'max_files', 'nargs': 1, 'opts': ['--max-files'], 'required': False, 'type': 'int'},
                {'default': 128, 'kind': 'option', 'max': 1000000, 'min': 0.001, 'multiple': False, 'name': 'max_file_mb', 'nargs': 1, 'opts': ['--max-file-mb'], 'required': False, 'type': 'float'},
                {'default': 64, 'kind': 'option', 'max': 1000000, 'min': 0.001, 'multiple': False, 'name': 'max_packument_mb', 'nargs': 1, 'opts': ['--max-packument-mb'], 'required': False, 'type': 'float'},
            ],
        },
        'preset': {
            'options': [
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
            ],
        },
        'preset list': {
            'arguments': [],
            'body': 'dshctl.cli.preset_list_run:run',
            'options': [
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
                {'default': None, 'kind': 'option', 'multiple': True, 'name': 'root', 'nargs': 1, 'opts': ['--root'], 'required': False, 'type': 'str'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'no_user_root', 'opts': ['--no-user-root'], 'required': False, 'secondary': []},
                {'default': 'text', 'kind': 'option', 'multiple': False, 'name': 'fmt', 'nargs': 1, 'opts': ['--format', '-f'], 'required': False, 'type': 'str'},
            ],
        },
        'profile': {'options': []},
        'profile dump': {
            'arguments': [],
            'body': 'dshctl.cli.profile_dump:run',
            'options': [
                {'default': None, 'kind': 'option', 'multiple': True, 'name': 'patch', 'nargs': 1, 'opts': ['--patch'], 'required': False, 'type': 'path'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'default_only', 'opts': ['--default-only'], 'required': False, 'secondary': []},
                {'default': 'yaml', 'kind': 'option', 'multiple': False, 'name': 'fmt', 'nargs': 1, 'opts': ['--format', '-f'], 'required': False, 'type': 'str'},
                {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'strict', 'opts': ['--strict'], 'required': False, 'secondary': []},
                {'default': None, 'kind': 'option', 'multiple': True, 'name': 'bundle_root', 'nargs': 1, 'opts': ['--bundle-root'], 'required': False, 'type': 'path'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
                {'default': None, 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
            ],
        },
    },
    'root': {
        'arguments': [],
        'options': [
            {'default': None, 'kind': 'option', 'multiple': False, 'name': 'home', 'nargs': 1, 'opts': ['--home'], 'required': False, 'type': 'home'},
            {'default': 'web', 'kind': 'option', 'multiple': False, 'name': 'profile', 'nargs': 1, 'opts': ['--profile', '-p'], 'required': False, 'type': 'str'},
            {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'debug', 'opts': ['--debug'], 'required': False, 'secondary': []},
            {'callback': True, 'default': False, 'kind': 'flag', 'multiple': False, 'name': 'version', 'opts': ['--version'], 'required': False, 'secondary': []},
            {'default': False, 'kind': 'flag', 'multiple': False, 'name': 'no_cache', 'opts': ['--no-cache'], 'required': False, 'secondary': []},
        ],
    },
}
